"""Who may call what: the policy decision every call asks for."""
