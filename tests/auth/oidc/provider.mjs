// A real OAuth 2.1 / OpenID authorization server for the tests: oidc-provider (installed by
// scripts/oidc-provider.sh) on 127.0.0.1, issuing JWT access tokens for one resource (RFC 8707) with the
// `asrama_scope` claim of the logged-in user. Configured by the environment:
//   OIDC_MODULE      the oidc-provider entry file (what scripts/oidc-provider.sh prints)
//   OIDC_PORT        the port to listen on (the test picks a free one); issuer http://127.0.0.1:<port>
//   OIDC_RESOURCE    the resource (our MCP server's public URL, .../mcp): the tokens' audience
//   OIDC_KEYS        a JSON file {"keys": [private JWK, ...]}: all published, the first signs (rotation: restart
//                    with a new first key); unset: one new RSA key, kid k1, for the life of the process
//   OIDC_USERS       a JSON file {"<login>": {"asrama_scope": [...], "email": "...", "email_verified": true}},
//                    read again for every token (a user's scope changes without a restart); other logins are
//                    refused; email and email_verified (each optional) are the claims of scope `email`
//   OIDC_ACCESS_TTL  seconds an access token lives (default 300)
//   OIDC_LOGIN_CLIENT  optional: a preregistered confidential client, as JSON metadata ({"client_id",
//                    "client_secret", "redirect_uris", "token_endpoint_auth_method"}), that signs people in (scope
//                    `openid email profile`): no resource, so its access token is for userinfo only
//   OIDC_ID_TOKEN_CLAIMS  "1": the ID token carries the scopes' claims (email) too, as Google's and Entra ID's do;
//                    otherwise only userinfo has them (oidc-provider's conformIdTokenClaims)
//   OIDC_TAMPER      optional: a file path; while the file exists, the token endpoint's ID token has its payload
//                    changed (the signature no longer matches), as a forged token would
// A client registers dynamically (RFC 7591) or names its client ID metadata document (an https URL; the test
// serves it on 127.0.0.1, so outgoing fetches skip oidc-provider's special-use-address guard, and Node trusts the
// test's certificate through NODE_EXTRA_CA_CERTS). PKCE (S256) is required; login and consent are oidc-provider's
// development pages (any password; the login must be a user of OIDC_USERS). Prints "ready <issuer>" on stderr.
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const { default: Provider, errors } = await import(pathToFileURL(process.env.OIDC_MODULE).href);

const port = Number(process.env.OIDC_PORT);
const issuer = `http://127.0.0.1:${port}`;
const resource = process.env.OIDC_RESOURCE;
const accessTtl = Number(process.env.OIDC_ACCESS_TTL || 300);
const SCOPE = 'asrama:read';
const loginClient = process.env.OIDC_LOGIN_CLIENT ? JSON.parse(process.env.OIDC_LOGIN_CLIENT) : undefined;

function keys() {
  if (process.env.OIDC_KEYS) return JSON.parse(readFileSync(process.env.OIDC_KEYS, 'utf8'));
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' }] };
}

function users() {
  return JSON.parse(readFileSync(process.env.OIDC_USERS, 'utf8'));
}

function tampered(idToken) {
  const [header, payload, signature] = idToken.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  const forged = Buffer.from(JSON.stringify({ ...claims, email: 'penyusup@contoh.sch.id' })).toString('base64url');
  return [header, forged, signature].join('.');
}

const provider = new Provider(issuer, {
  jwks: keys(),
  scopes: ['openid', 'offline_access', 'email', 'profile', SCOPE],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  clients: loginClient ? [{ grant_types: ['authorization_code'], response_types: ['code'], ...loginClient }] : [],
  conformIdTokenClaims: process.env.OIDC_ID_TOKEN_CLAIMS !== '1',
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client) => (loginClient && client?.clientId === loginClient.client_id ? undefined : resource),
      useGrantedResource: () => true,
      getResourceServerInfo(ctx, indicator) {
        if (indicator !== resource) throw new errors.InvalidTarget();
        return { scope: SCOPE, audience: resource, accessTokenTTL: accessTtl, accessTokenFormat: 'jwt' };
      },
    },
  },
  fetch: (url, options) => fetch(url, { ...options, dispatcher: undefined }),
  pkce: { required: () => true },
  clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none' },
  issueRefreshToken: (ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: { AccessToken: accessTtl, RefreshToken: 3600 },
  async findAccount(ctx, id) {
    if (!Object.hasOwn(users(), id)) return undefined;
    const { email, email_verified } = users()[id];
    return { accountId: id, claims: () => ({ sub: id, email, email_verified }) };
  },
  async extraTokenClaims(ctx, token) {
    if (token.kind !== 'AccessToken') return undefined;
    const user = users()[token.accountId];
    if (!user) throw new errors.InvalidGrant('unknown user');
    return { asrama_scope: user.asrama_scope };
  },
});

provider.use(async (ctx, next) => {
  await next();
  const tamper = process.env.OIDC_TAMPER;
  if (tamper && existsSync(tamper) && ctx.path === '/token' && ctx.body?.id_token) {
    ctx.body = { ...ctx.body, id_token: tampered(ctx.body.id_token) };
  }
});

provider.listen(port, '127.0.0.1', () => console.error(`ready ${issuer}`));
