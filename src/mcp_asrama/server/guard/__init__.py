"""Who may see or change what, and who did: authentication, scope, rate limits, audit, confirmation."""
