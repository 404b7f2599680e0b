// The service configuration: parsed once, at the entry point, from the environment.
// Nothing else in the code base reads process.env; tests build their own Config.
import { isIP } from 'node:net';
import { z } from 'zod';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type DatabaseConfig =
  | { readonly dialect: 'sqlite'; readonly path: string }
  | {
      readonly dialect: 'postgres';
      readonly url: string;
      /** Tests only: smaller bounds, so that an outage is seen in seconds. */
      readonly bounds?: Partial<PostgresBounds>;
    };

/** How long compplan waits for PostgreSQL; the values and why: src/db/timeouts.ts. */
export interface PostgresBounds {
  /** Opening a connection, and waiting for one from a full pool. */
  readonly connectMs: number;
  /** The server's statement timeout for the API's statements (504). */
  readonly statementMs: number;
  /** How long a statement of the API may go unanswered (503; the connection is closed). */
  readonly queryMs: number;
  /** How long a request may wait for a turn at the pool (503). */
  readonly turnWaitMs: number;
  /** How long /readyz waits for the database before answering "not ready". */
  readonly readinessMs: number;
  /** Idle time before the first TCP keepalive probe of a connection. */
  readonly keepAliveMs: number;
}

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly database: DatabaseConfig;
  /** Shared rate-limit store; undefined means an in-process store (one instance). */
  readonly redisUrl: string | undefined;
  readonly rateLimitPerSecond: number;
  readonly logLevel: LogLevel;
  /** Port of the Prometheus /metrics listener; undefined: no metrics listener. */
  readonly metricsPort: number | undefined;
  /**
   * Addresses (IPs or CIDRs) of the reverse proxies in front of compplan, whose
   * X-Forwarded-For and X-Forwarded-Proto are believed. Empty: none, so that a client
   * cannot pick the address the failed-authentication limit counts against.
   */
  readonly trustProxy: readonly string[];
  /**
   * How long removals are remembered for delta sync (docs/delta-sync.md, "Retention"): tombstones
   * older than this are purged, and a delta token older than this gets 410.
   */
  readonly changeRetentionDays: number;
  /** Webhook delivery (src/webhooks); absent: the default (no allowance). */
  readonly webhooks?: WebhookConfig;
  /** How long audit log entries are kept (docs/security.md); absent: 365 days. */
  readonly auditRetentionDays?: number;
  /**
   * Benchmark only (BENCH_AUDIT_LOG=off): no request entries are recorded, so that `npm
   * run bench` can measure what the audit log costs. Never set in a deployment: the audit
   * log is always on. Absent: on.
   */
  readonly auditLogOffForBenchmark?: boolean;
}

export interface WebhookConfig {
  /**
   * Private ranges (CIDRs) webhook URLs may name and resolve to, and where http:// is
   * allowed: on-premises receivers and tests. Empty: public https:// addresses only.
   */
  readonly allowPrivateNetworks: readonly string[];
}

/** What a Config without `webhooks` means. */
export const DEFAULT_WEBHOOK_CONFIG: WebhookConfig = Object.freeze({
  allowPrivateNetworks: Object.freeze([]),
});

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const DEFAULT_CHANGE_RETENTION_DAYS = 30;
export const DEFAULT_AUDIT_RETENTION_DAYS = 365;

const DEFAULTS = {
  PORT: '3000',
  HOST: '127.0.0.1',
  DATABASE_URL: 'sqlite:./data/compplan.db',
  RATE_LIMIT_PER_SECOND: '10',
  LOG_LEVEL: 'info',
  CHANGE_RETENTION_DAYS: String(DEFAULT_CHANGE_RETENTION_DAYS),
  AUDIT_RETENTION_DAYS: String(DEFAULT_AUDIT_RETENTION_DAYS),
} as const;

// Whole decimal numbers only: Number('') is 0 and Number('1e3') is 1000, neither of
// which anyone means when they write a port.
const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, `must be from ${min} to ${max}`)
        .max(max, `must be from ${min} to ${max}`),
    );

function isAddressOrRange(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128);
}

const addressList = (what: string, example: string) =>
  z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
    )
    .refine((entries) => entries.every(isAddressOrRange), {
      message: `must be a comma-separated list of ${what} or CIDR ranges, e.g. ${example}`,
    });

const databaseUrl = z.string().transform((value, ctx): DatabaseConfig => {
  if (value.startsWith('sqlite:')) {
    const path = value.slice('sqlite:'.length);
    if (path.length > 0) return { dialect: 'sqlite', path };
  } else if (/^postgres(ql)?:\/\/./.test(value)) {
    try {
      new URL(value);
      return { dialect: 'postgres', url: value };
    } catch {
      // reported below
    }
  }
  ctx.addIssue({
    code: 'custom',
    message: 'must be sqlite:PATH or postgres://user:password@host:port/database',
  });
  return z.NEVER;
});

const redisUrl = z.string().refine((value) => /^rediss?:\/\/./.test(value) && URL.canParse(value), {
  message: 'must be a redis:// or rediss:// URL',
});

const envSchema = z.object({
  PORT: wholeNumber(0, 65535),
  HOST: z.string().refine((value) => value.trim().length > 0, { message: 'must not be empty' }),
  DATABASE_URL: databaseUrl,
  REDIS_URL: redisUrl.optional(),
  RATE_LIMIT_PER_SECOND: wholeNumber(1, 1_000_000),
  LOG_LEVEL: z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` }),
  METRICS_PORT: wholeNumber(0, 65535).optional(),
  TRUST_PROXY: addressList('proxy IP addresses', '127.0.0.1,10.0.0.0/8'),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: addressList('IP addresses', '10.20.0.0/16,127.0.0.0/8'),
  // Ten years at most: a bound that keeps every date computed from it valid.
  CHANGE_RETENTION_DAYS: wholeNumber(1, 3650),
  AUDIT_RETENTION_DAYS: wholeNumber(1, 3650),
  BENCH_AUDIT_LOG: z.enum(['on', 'off'], {
    message: 'must be on or off (off only for npm run bench)',
  }),
});

/** Every environment variable the configuration reads. */
export const CONFIG_VARIABLES = Object.freeze(
  Object.keys(envSchema.shape),
) as readonly (keyof typeof envSchema.shape)[];

/** Variables a Config is read from; a value that is empty counts as unset. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Reads the configuration. A bad value throws a ConfigError whose one-line message names
 * the variable, what it must be and what it was, so that start-up stops with something a
 * person can act on.
 */
export function loadConfig(env: Environment): Config {
  const pick = (name: keyof typeof envSchema.shape) => {
    const value = env[name];
    return value === undefined || value === '' ? undefined : value;
  };
  const raw = {
    PORT: pick('PORT') ?? DEFAULTS.PORT,
    HOST: pick('HOST') ?? DEFAULTS.HOST,
    DATABASE_URL: pick('DATABASE_URL') ?? DEFAULTS.DATABASE_URL,
    REDIS_URL: pick('REDIS_URL'),
    RATE_LIMIT_PER_SECOND: pick('RATE_LIMIT_PER_SECOND') ?? DEFAULTS.RATE_LIMIT_PER_SECOND,
    LOG_LEVEL: pick('LOG_LEVEL') ?? DEFAULTS.LOG_LEVEL,
    METRICS_PORT: pick('METRICS_PORT'),
    TRUST_PROXY: pick('TRUST_PROXY') ?? '',
    CHANGE_RETENTION_DAYS: pick('CHANGE_RETENTION_DAYS') ?? DEFAULTS.CHANGE_RETENTION_DAYS,
    AUDIT_RETENTION_DAYS: pick('AUDIT_RETENTION_DAYS') ?? DEFAULTS.AUDIT_RETENTION_DAYS,
    BENCH_AUDIT_LOG: pick('BENCH_AUDIT_LOG') ?? 'on',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: pick('WEBHOOK_ALLOW_PRIVATE_NETWORKS') ?? '',
  };
  const parsed = envSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0] ?? 'configuration');
    const value = raw[name as keyof typeof raw];
    // Never echo a URL back whole: it may carry a password.
    const shown = /URL$/.test(name) ? '' : ` (got ${JSON.stringify(value)})`;
    throw new ConfigError(`${name} ${issue?.message ?? 'is invalid'}${shown}`);
  }
  const env_ = parsed.data;
  return Object.freeze({
    port: env_.PORT,
    host: env_.HOST,
    database: Object.freeze(env_.DATABASE_URL),
    redisUrl: env_.REDIS_URL,
    rateLimitPerSecond: env_.RATE_LIMIT_PER_SECOND,
    logLevel: env_.LOG_LEVEL,
    metricsPort: env_.METRICS_PORT,
    trustProxy: Object.freeze(env_.TRUST_PROXY),
    changeRetentionDays: env_.CHANGE_RETENTION_DAYS,
    auditRetentionDays: env_.AUDIT_RETENTION_DAYS,
    auditLogOffForBenchmark: env_.BENCH_AUDIT_LOG === 'off',
    webhooks: Object.freeze({
      allowPrivateNetworks: Object.freeze(env_.WEBHOOK_ALLOW_PRIVATE_NETWORKS),
    }),
  });
}

/**
 * The URL a client on this machine reaches a server listening on `host` and `port` at:
 * a server on every address (0.0.0.0, ::) is reached at localhost.
 */
export function localUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}
