"""The service's wire shapes, one module per domain (`common`: the types they share)."""
