// A real OpenID Connect provider for tests: `oidc-provider` (a certified implementation) on
// 127.0.0.1, port 0. It is ESM only, so it runs in its own Node process (jest runs CommonJS).
//
// Protocol on stdio: it prints `listening <issuer>` once its port is known; it then reads one JSON
// line `{"redirectUris": [...], "postLogoutRedirectUris": [...]}` (the backend's callback, known
// only once the backend listens) and prints `ready`; another such line (the backend started again
// on another port, its first taken) replaces the client. Lines `{"account": "bob", "groups": [...]}`
// change an account's groups (a person removed from a group at the provider) and print `updated`. Accounts come from SPECTATOR_TEST_OIDC_ACCOUNTS: {"alice": {"name", "email", "groups"}}.
// Any password signs an account in (the provider's development login form).
import http from 'node:http';
import process from 'node:process';
import readline from 'node:readline';
import Provider from 'oidc-provider';

const accounts = JSON.parse(process.env.SPECTATOR_TEST_OIDC_ACCOUNTS ?? '{}');
const clientId = process.env.SPECTATOR_TEST_OIDC_CLIENT_ID ?? 'spectator';
const clientSecret = process.env.SPECTATOR_TEST_OIDC_CLIENT_SECRET ?? 'spectator-test-secret';

let handler = (_request, response) => {
  response.statusCode = 503;
  response.end('not ready');
};
const server = http.createServer((request, response) => handler(request, response));
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  process.stdout.write(`listening ${issuer}\n`);
  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const message = JSON.parse(line);
    if (message.redirectUris === undefined) {
      const { account, groups } = message;
      accounts[account] = { ...accounts[account], groups };
      process.stdout.write('updated\n');
      return;
    }
    const { redirectUris, postLogoutRedirectUris = [] } = message;
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: redirectUris,
          post_logout_redirect_uris: postLogoutRedirectUris,
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      async findAccount(_ctx, id) {
        const account = accounts[id];
        if (!account) return undefined;
        return { accountId: id, claims: async () => ({ sub: id, email_verified: true, ...account }) };
      },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
      scopes: ['openid', 'email', 'profile', 'groups'],
      // The groups claim in the ID token too, as Entra ID and Keycloak can send it.
      conformIdTokenClaims: false,
      pkce: { required: () => true },
      features: { devInteractions: { enabled: true } },
      cookies: { keys: ['spectator-test-cookie-key'] },
    });
    handler = provider.callback();
    process.stdout.write('ready\n');
  });
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
