"""Who may see or change what, and who did: authentication, scope, rate limits, audit, confirmation.

Policy only. The whole chain is assembled by one function, `chain.install` (its objects built by `chain.Guard.of`);
a request meets it in this order, outermost first (over stdio it starts at 6):

    HTTP (transport.http_app, through server.guard_http)
     1. Host / Origin gate ........ http_guard.HostOriginGate            403 foreign Origin, 421 foreign Host
        health, POST only ......... transport.HealthAndPost              /healthz, /readyz end here; 405
     2. body limit ................ SDK RequestBodyLimitMiddleware       413
        sign-in (--auth sekolah) .. sekolah.authority.Authority.wrap     /masuk, /izin, metadata, JWKS end here
     3. routing headers ........... routing_headers.RoutingHeaderCheck   -32020; reads the body once
     4. rate limit ................ guard.ratelimit.wrap_http            429 (authenticated servers only)
     5. bearer auth ............... SDK auth, guard.auth verifier        401, 403 insufficient_scope, RFC 9728
    MCP middleware (every transport; after the SDK's OpenTelemetry)
     6. rate limit per method ..... guard.ratelimit.middleware           -32029, a tool error for tools/call
     7. audit ..................... guard.audit.Auditor                  one sealed line per data request
     8. the server's own .......... live.gate_listen (a listen's scope), live.only_what_is_sent, discovery
     9. confirmation noted ........ guard.confirm.noted
    10. requestState verified ..... SDK RequestStateBoundary             -32602
    11. confirmation claimed ...... guard.confirm.Claimed                once; -32602 replayed
    Handler
    12. tool-level scope .......... AsramaServer asks chain.Guard.permits: the writes (guard.writes.allowed),
                                    clinic staff (guard.access); any other tool is unknown to the caller (-32602)
    13. scoped reads, disclosure .. every read cut to the caller's Akses (guard.access); what went out declared
                                    to the audit (guard.audit.disclose*) and written at step 7
"""
