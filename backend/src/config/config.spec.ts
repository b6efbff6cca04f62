import path from 'node:path';
import { ConfigError, parseConfig } from './config';

describe('parseConfig', () => {
  it('has defaults for everything', () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: null,
      adminToken: null,
      runMigrations: true,
      logLevel: 'info',
      maxMessageBytes: 4 * 1024 * 1024,
      batchRetentionDays: 30,
      captureRetentionDays: 90,
      runtimeRetention: { minuteDays: 2, hourDays: 35, dayDays: 400 },
      databaseIdleSeconds: 300,
    });
    expect(config.dataDir).toBe(path.resolve('.spectator'));
  });

  it('reads single sign-on: the recheck time and where the provider sends people after signing out', () => {
    const sso = {
      SPECTATOR_OIDC_ISSUER: 'https://idp.example.com/realms/acme',
      SPECTATOR_OIDC_CLIENT_ID: 'spectator',
      SPECTATOR_OIDC_REDIRECT_URL: 'https://spectator.example.com/api/v1/auth/callback',
    };
    const defaults = parseConfig(sso).oidc;
    expect(defaults?.recheckMinutes).toBe(60);
    expect(defaults?.postLogoutRedirectUrl.href).toBe('https://spectator.example.com/');
    const set = parseConfig({
      ...sso,
      SPECTATOR_OIDC_RECHECK_MINUTES: '15',
      SPECTATOR_OIDC_POST_LOGOUT_URL: 'https://spectator.example.com/#/signin',
    }).oidc;
    expect(set?.recheckMinutes).toBe(15);
    expect(set?.postLogoutRedirectUrl.href).toBe('https://spectator.example.com/#/signin');
    expect(() => parseConfig({ ...sso, SPECTATOR_OIDC_RECHECK_MINUTES: '0' })).toThrow(
      /SPECTATOR_OIDC_RECHECK_MINUTES/,
    );
    expect(() => parseConfig({ ...sso, SPECTATOR_OIDC_POST_LOGOUT_URL: 'not a url' })).toThrow(
      'SPECTATOR_OIDC_POST_LOGOUT_URL must be an http(s) URL',
    );
  });

  it('reads the public address for links in chat messages, without a trailing slash, and refuses other URLs', () => {
    expect(parseConfig({}).publicUrl).toBeNull();
    expect(parseConfig({ SPECTATOR_PUBLIC_URL: 'https://spectator.example.com/' }).publicUrl).toBe(
      'https://spectator.example.com',
    );
    expect(parseConfig({ SPECTATOR_PUBLIC_URL: 'https://example.com/tools/spectator' }).publicUrl).toBe(
      'https://example.com/tools/spectator',
    );
    for (const bad of ['not a url', 'ftp://example.com', 'https://u:p@example.com', 'https://example.com/?a=1'])
      expect(() => parseConfig({ SPECTATOR_PUBLIC_URL: bad })).toThrow(/SPECTATOR_PUBLIC_URL must be an http/);
  });

  it('reads the environment and lets options win', () => {
    const env = {
      PORT: '8080',
      DATABASE_URL: 'postgres://u:p@db/s',
      SPECTATOR_ADMIN_TOKEN: 'a-long-enough-token',
      SPECTATOR_RUN_MIGRATIONS: 'false',
      LOG_LEVEL: 'warn',
      SPECTATOR_BATCH_RETENTION_DAYS: '90',
      SPECTATOR_CAPTURE_RETENTION_DAYS: '0',
      SPECTATOR_DATABASE_IDLE_SECONDS: '0',
    };
    expect(parseConfig(env)).toMatchObject({
      port: 8080,
      databaseUrl: 'postgres://u:p@db/s',
      adminToken: 'a-long-enough-token',
      runMigrations: false,
      logLevel: 'warn',
      batchRetentionDays: 90,
      captureRetentionDays: 0,
      databaseIdleSeconds: 0,
    });
    expect(parseConfig(env, { port: 0, runMigrations: true })).toMatchObject({ port: 0, runMigrations: true });
  });

  it('names every bad variable at once', () => {
    const bad = {
      PORT: 'eighty',
      DATABASE_URL: 'mysql://x',
      SPECTATOR_ADMIN_TOKEN: 'CHANGE-ME to a random token',
      SPECTATOR_RUN_MIGRATIONS: 'maybe',
      LOG_LEVEL: 'loud',
      SPECTATOR_MAX_MESSAGE_BYTES: '-1',
      SPECTATOR_BATCH_RETENTION_DAYS: '0',
      SPECTATOR_CAPTURE_RETENTION_DAYS: 'forever',
      SPECTATOR_DATABASE_IDLE_SECONDS: '-5',
    };
    let error: unknown;
    try {
      parseConfig(bad);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of Object.keys(bad)) expect(problems).toContain(name);
  });

  it('reads how long runtime evidence is kept per resolution, each at least the one before', () => {
    const env = {
      SPECTATOR_RUNTIME_MINUTE_DAYS: '7',
      SPECTATOR_RUNTIME_HOUR_DAYS: '90',
      SPECTATOR_RUNTIME_DAY_DAYS: '730',
    };
    expect(parseConfig(env).runtimeRetention).toEqual({ minuteDays: 7, hourDays: 90, dayDays: 730 });
    expect(parseConfig(env, { runtimeRetention: { dayDays: 3650 } }).runtimeRetention.dayDays).toBe(3650);
    expect(() => parseConfig({ SPECTATOR_RUNTIME_MINUTE_DAYS: '0' })).toThrow(/SPECTATOR_RUNTIME_MINUTE_DAYS/);
    // How often folded minutes are rolled up into hours and days: 60 s unless set, 1 s to an hour.
    expect(parseConfig({}).runtimeRollupSeconds).toBe(60);
    expect(parseConfig({ SPECTATOR_RUNTIME_ROLLUP_SECONDS: '10' }).runtimeRollupSeconds).toBe(10);
    expect(parseConfig({}, { runtimeRollupSeconds: 1 }).runtimeRollupSeconds).toBe(1);
    for (const bad of ['0', '3601', '1.5', 'often'])
      expect(() => parseConfig({ SPECTATOR_RUNTIME_ROLLUP_SECONDS: bad })).toThrow(/SPECTATOR_RUNTIME_ROLLUP_SECONDS/);
    expect(() => parseConfig({ SPECTATOR_RUNTIME_HOUR_DAYS: '1' })).toThrow(
      'SPECTATOR_RUNTIME_HOUR_DAYS (1) must be at least SPECTATOR_RUNTIME_MINUTE_DAYS (2)',
    );
    expect(() => parseConfig({ SPECTATOR_RUNTIME_DAY_DAYS: '30' })).toThrow(
      'SPECTATOR_RUNTIME_DAY_DAYS (30) must be at least SPECTATOR_RUNTIME_HOUR_DAYS (35)',
    );
  });
});
