PLUGIN_MANIFEST = {
    "name": "gmail_digest",
    "version": "1.0.0",
    "entrypoints": {"gmail_digest": "gmail_digest.plugin:Plugin"},
    "capabilities": ["kb", "auth", "identity"],
    "default_feed_op": "digest",
    "allowed_feed_ops": ["digest"],
    "required_identities": [{"provider": "google", "mode": "user", "scopes": ["gmail.readonly"]}],
    "op_auth": {
        "digest": {"provider": "google", "mode": "user", "scopes": ["gmail.readonly"]},
        "send": {"provider": "google", "mode": "user", "scopes": ["gmail.send"]},
    },
}
