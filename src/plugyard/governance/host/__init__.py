"""The host object's services a plugin reaches through its manifest's capabilities."""
