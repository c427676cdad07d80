"""How our processes start and guard a socket: choosing the HTTP stack (`stack`), serving on uvicorn (`serving`),
starting the data service and the demo (`launch`), how the command was invoked (`invocation`), the Host/Origin
gate of both HTTP servers (`http_guard`) and structured logs on stderr (`logs`)."""
