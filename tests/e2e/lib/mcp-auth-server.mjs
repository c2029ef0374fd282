// A REAL OAuth 2.1 authorization server for MCP sign-in tests: the official SDK's auth router
// (`mcpAuthRouter`: RFC 8414 metadata, Dynamic Client Registration, /authorize with PKCE,
// /token, /revoke) over the SDK's demo in-memory provider, which signs the user in at once
// (a person clicking "Allow"). The demo provider is extended only where a test needs more of
// a real server: refresh tokens, revocation, the grants it answered (`grants`), and
// (`tamperState`, `wrongIss`) a redirect with the wrong `state` or the wrong `iss` (RFC 9207),
// as an attacker's would be.
import express from 'express';
import { randomUUID } from 'node:crypto';
import { mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { DemoInMemoryAuthProvider } from '@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js';

class Provider extends DemoInMemoryAuthProvider {
  constructor({ resource, tamperState, wrongIss, expiresIn, registration }) {
    // RFC 8707: the code is only exchanged for the MCP server Tandem named as `resource`.
    super((r) => r?.toString() === resource);
    if (!registration) {
      // No Dynamic Client Registration: the router then offers no /register, and clients
      // are only those an administrator added (`clientsStore.clients`).
      const store = this.clientsStore;
      this.clientsStore = { clients: store.clients, getClient: (id) => store.getClient(id) };
    }
    this.tamperState = tamperState;
    this.wrongIss = wrongIss;
    this.grants = []; // the grant_type of every token request answered, in order
    this.expiresIn = expiresIn;
    this.refreshTokens = new Map(); // refresh token → client id
    this.revoked = [];
    this.refreshed = 0;
  }

  async authorize(client, params, res) {
    if (this.wrongIss) {
      // A mix-up attack's answer: the code comes back named as another issuer's.
      const redirect = res.redirect.bind(res);
      res.redirect = (to) => { const u = new URL(to); u.searchParams.set('iss', this.wrongIss); return redirect(u.toString()); };
    }
    return super.authorize(client, this.tamperState ? { ...params, state: 'not-the-state-tandem-sent' } : params, res);
  }

  issue(clientId, resource) {
    const token = randomUUID();
    this.tokens.set(token, { token, clientId, scopes: [], expiresAt: Date.now() + this.expiresIn * 1000, resource, type: 'access' });
    const refresh = randomUUID();
    this.refreshTokens.set(refresh, clientId);
    return { access_token: token, token_type: 'bearer', expires_in: this.expiresIn, refresh_token: refresh };
  }

  async exchangeAuthorizationCode(client, code, verifier, redirectUri, resource) {
    const answer = await super.exchangeAuthorizationCode(client, code, verifier, redirectUri, resource);
    this.grants.push('authorization_code');
    this.tokens.delete(answer.access_token);
    return this.issue(client.client_id, resource);
  }

  async exchangeRefreshToken(client, refreshToken, _scopes, resource) {
    this.grants.push('refresh_token');
    if (this.refreshTokens.get(refreshToken) !== client.client_id) throw new Error('unknown refresh token');
    this.refreshTokens.delete(refreshToken);
    this.refreshed += 1;
    return this.issue(client.client_id, resource);
  }

  async revokeToken(_client, { token }) {
    this.revoked.push(token);
    this.tokens.delete(token);
    this.refreshTokens.delete(token);
  }

  /** Ends every access token now, as an expiry or a revocation by an administrator does. */
  expireAll() { this.tokens.clear(); }

  accepts(token) { const t = this.tokens.get(token); return Boolean(t && t.expiresAt > Date.now()); }
}

/**
 * Starts the authorization server for the MCP server at `resource` (its URL). Returns
 * `{ url, provider, received, close }`; `received` lists every request (method, path,
 * query). `registration: false`: a server without Dynamic Client Registration. `expiresIn`:
 * the access tokens' lifetime in seconds. `wrongIss`: the `iss` its sign-in answers carry.
 */
export async function startAuthServer({ resource, tamperState = false, wrongIss = null, expiresIn = 3600, registration = true }) {
  const provider = new Provider({ resource, tamperState, wrongIss, expiresIn, registration });
  const app = express();
  const received = [];
  app.use((req, _res, next) => { received.push({ method: req.method, path: req.path, query: req.query }); next(); });
  const server = await new Promise((r) => { const s = app.listen(0, '127.0.0.1', () => r(s)); });
  const url = `http://127.0.0.1:${server.address().port}`;
  app.use(mcpAuthRouter({ provider, issuerUrl: new URL(url), scopesSupported: ['mcp:tools'] }));
  return {
    url, provider, received,
    close: async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)); },
  };
}
