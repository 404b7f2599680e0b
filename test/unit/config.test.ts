// loadConfig (docs/operations.md, "Configuration"): defaults, and a one-line message naming the
// variable for each bad value, never echoing a URL that may carry a password.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

function errorOf(env: Record<string, string | undefined>): string {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('uses the documented defaults when nothing is set', () => {
    expect(loadConfig({})).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      database: { dialect: 'sqlite', path: './data/compplan.db' },
      redisUrl: undefined,
      rateLimitPerSecond: 10,
      logLevel: 'info',
    });
  });

  it('treats an empty value as unset', () => {
    expect(
      loadConfig({
        PORT: '',
        HOST: '',
        DATABASE_URL: '',
        RATE_LIMIT_PER_SECOND: '',
        LOG_LEVEL: '',
      }),
    ).toEqual(loadConfig({}));
  });

  it('reads every variable', () => {
    expect(
      loadConfig({
        PORT: '8080',
        HOST: '127.0.0.1',
        DATABASE_URL: 'postgres://app:pw@db.internal:5432/compplan',
        REDIS_URL: 'rediss://cache.internal:6380',
        RATE_LIMIT_PER_SECOND: '25',
        LOG_LEVEL: 'warn',
      }),
    ).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      database: { dialect: 'postgres', url: 'postgres://app:pw@db.internal:5432/compplan' },
      redisUrl: 'rediss://cache.internal:6380',
      rateLimitPerSecond: 25,
      logLevel: 'warn',
    });
    expect(loadConfig({ DATABASE_URL: 'sqlite:/var/lib/compplan/x.db', PORT: '0' })).toMatchObject({
      port: 0,
      database: { dialect: 'sqlite', path: '/var/lib/compplan/x.db' },
    });
    expect(loadConfig({ DATABASE_URL: 'postgresql://h/db' }).database).toEqual({
      dialect: 'postgres',
      url: 'postgresql://h/db',
    });
  });

  it.each([
    ['abc', 'PORT must be a whole number from 0 to 65535 (got "abc")'],
    ['-1', 'PORT must be a whole number from 0 to 65535 (got "-1")'],
    ['80.5', 'PORT must be a whole number from 0 to 65535 (got "80.5")'],
    ['1e3', 'PORT must be a whole number from 0 to 65535 (got "1e3")'],
    [' 80', 'PORT must be a whole number from 0 to 65535 (got " 80")'],
    ['65536', 'PORT must be from 0 to 65535 (got "65536")'],
  ])('refuses PORT=%j with a one-line message naming PORT', (value, message) => {
    expect(errorOf({ PORT: value })).toBe(message);
  });

  it.each([
    ['0', 'RATE_LIMIT_PER_SECOND must be from 1 to 1000000 (got "0")'],
    ['abc', 'RATE_LIMIT_PER_SECOND must be a whole number from 1 to 1000000 (got "abc")'],
    ['2.5', 'RATE_LIMIT_PER_SECOND must be a whole number from 1 to 1000000 (got "2.5")'],
    ['1000001', 'RATE_LIMIT_PER_SECOND must be from 1 to 1000000 (got "1000001")'],
  ])('refuses RATE_LIMIT_PER_SECOND=%j with a one-line message naming it', (value, message) => {
    expect(errorOf({ RATE_LIMIT_PER_SECOND: value })).toBe(message);
  });

  it.each(['loud', 'INFO', 'verbose'])(
    'refuses LOG_LEVEL=%j naming the allowed levels',
    (value) => {
      expect(errorOf({ LOG_LEVEL: value })).toBe(
        `LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "${value}")`,
      );
    },
  );

  it.each(['mysql://x', 'sqlite:', 'postgres://', 'file:./x.db', './data/compplan.db'])(
    'refuses DATABASE_URL=%j with a one-line message naming it',
    (value) => {
      expect(errorOf({ DATABASE_URL: value })).toBe(
        'DATABASE_URL must be sqlite:PATH or postgres://user:password@host:port/database',
      );
    },
  );

  it('reads CHANGE_RETENTION_DAYS, 30 by default', () => {
    expect(loadConfig({}).changeRetentionDays).toBe(30);
    expect(loadConfig({ CHANGE_RETENTION_DAYS: '7' }).changeRetentionDays).toBe(7);
  });

  it.each([
    ['0', 'CHANGE_RETENTION_DAYS must be from 1 to 3650 (got "0")'],
    ['3651', 'CHANGE_RETENTION_DAYS must be from 1 to 3650 (got "3651")'],
    ['30d', 'CHANGE_RETENTION_DAYS must be a whole number from 1 to 3650 (got "30d")'],
    ['-1', 'CHANGE_RETENTION_DAYS must be a whole number from 1 to 3650 (got "-1")'],
  ])('refuses CHANGE_RETENTION_DAYS=%j with a one-line message naming it', (value, message) => {
    expect(errorOf({ CHANGE_RETENTION_DAYS: value })).toBe(message);
  });

  it('reads AUDIT_RETENTION_DAYS, 365 by default, and refuses what is not 1 to 3650 days', () => {
    expect(loadConfig({}).auditRetentionDays).toBe(365);
    expect(loadConfig({ AUDIT_RETENTION_DAYS: '90' }).auditRetentionDays).toBe(90);
    expect(errorOf({ AUDIT_RETENTION_DAYS: '0' })).toBe(
      'AUDIT_RETENTION_DAYS must be from 1 to 3650 (got "0")',
    );
    expect(errorOf({ AUDIT_RETENTION_DAYS: '1y' })).toBe(
      'AUDIT_RETENTION_DAYS must be a whole number from 1 to 3650 (got "1y")',
    );
  });

  it('keeps the audit log on unless BENCH_AUDIT_LOG=off (the benchmark), and refuses other values', () => {
    expect(loadConfig({}).auditLogOffForBenchmark).toBe(false);
    expect(loadConfig({ BENCH_AUDIT_LOG: 'on' }).auditLogOffForBenchmark).toBe(false);
    expect(loadConfig({ BENCH_AUDIT_LOG: 'off' }).auditLogOffForBenchmark).toBe(true);
    expect(errorOf({ BENCH_AUDIT_LOG: 'no' })).toBe(
      'BENCH_AUDIT_LOG must be on or off (off only for npm run bench) (got "no")',
    );
  });

  it('refuses a blank HOST with a one-line message naming it', () => {
    expect(errorOf({ HOST: '   ' })).toBe('HOST must not be empty (got "   ")');
  });

  it('refuses a REDIS_URL that is not redis:// or rediss://', () => {
    expect(errorOf({ REDIS_URL: 'http://cache:6379' })).toBe(
      'REDIS_URL must be a redis:// or rediss:// URL',
    );
  });

  it('never echoes a URL that may carry a password', () => {
    for (const env of [
      { DATABASE_URL: 'mysql://admin:hunter2@db.example/compplan' },
      { DATABASE_URL: 'postgres://admin:hunter2@db:notaport/compplan' },
      { REDIS_URL: 'http://default:hunter2@cache:6379' },
    ]) {
      const message = errorOf(env);
      expect(message).not.toContain('hunter2');
      expect(message).not.toContain('\n');
    }
  });

  it('every message is a single line', () => {
    for (const env of [
      { PORT: 'x\ny' },
      { LOG_LEVEL: 'a\nb' },
      { RATE_LIMIT_PER_SECOND: '1\n2' },
    ]) {
      expect(errorOf(env)).not.toContain('\n');
    }
  });
});
