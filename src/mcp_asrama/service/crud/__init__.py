"""Queries and writes of the data service, one module per domain; routes stay thin and import only these."""
