"""Forms generated from an operation's parameter schema, and their submissions."""
