import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestBackend, type TestBackend } from './support';

let backend: TestBackend;
let dashboardDir: string;

beforeAll(async () => {
  dashboardDir = await mkdtemp(path.join(os.tmpdir(), 'spectator-dashboard-'));
  await mkdir(path.join(dashboardDir, 'assets'));
  await writeFile(
    path.join(dashboardDir, 'index.html'),
    '<!doctype html><html><body>spectator dashboard</body></html>',
  );
  await writeFile(path.join(dashboardDir, 'assets', 'app.js'), 'console.log("app")');
  backend = await startTestBackend({ dashboardDir });
});
afterAll(async () => {
  await backend.close();
  await rm(dashboardDir, { recursive: true, force: true });
});

describe('the built dashboard', () => {
  it('is served at / with its assets, and client-side routes fall back to index.html', async () => {
    for (const route of ['/', '/projects/demo/captures', '/versions']) {
      const page = await fetch(`${backend.url}${route}`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('spectator dashboard');
    }
    const asset = await fetch(`${backend.url}/assets/app.js`);
    expect(asset.headers.get('content-type')).toContain('javascript');
  });

  it('leaves the API its own 404s', async () => {
    const missing = await fetch(`${backend.url}/api/v1/nothing`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
  });
});

// Issue 15 item 14: no CSP, frame-ancestors, X-Content-Type-Options or Referrer-Policy.
describe('security headers', () => {
  it.each(['/', '/projects/demo/captures', '/assets/app.js', '/api/v1/health', '/api/v1/nothing', '/api/docs'])(
    '%s carries them',
    async (route) => {
      const response = await fetch(`${backend.url}${route}`);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("object-src 'none'");
      expect(csp).not.toContain('upgrade-insecure-requests'); // plain-HTTP installations keep working
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
    },
  );
});
