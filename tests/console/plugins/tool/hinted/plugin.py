"""Echoes what its generated forms send."""


def configure(mode, subject_email=None, since_hours=48, query=None, level=None, internal=None,
              options=None):  # fmt: skip
    return {"mode": mode, "subject_email": subject_email, "since_hours": since_hours,
            "query": query, "level": level, "options": options}  # fmt: skip


def digest(topic="everything"):
    return {"digest": f"nothing new on {topic}"}


def whoami(email=None, greeting="hello"):
    return {"greeting": greeting, "email": email}
