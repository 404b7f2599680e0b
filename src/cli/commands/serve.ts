import { type Command, InvalidArgumentError } from 'commander';
import { DEMO_ORGANIZATION } from '../../demo/organization.js';
import { configFromEnvironment } from '../context.js';

function port(value: string): string {
  if (!/^\d+$/.test(value) || Number(value) > 65535) {
    throw new InvalidArgumentError('must be a whole number from 0 to 65535');
  }
  return value;
}

function host(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty');
  return value;
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('Run the API server (applies pending migrations first)')
    .option('--port <n>', 'listening port (default: PORT or 3000)', port)
    .option(
      '--host <address>',
      'listening address (default: HOST or 127.0.0.1, this machine only)',
      host,
    )
    .option('--demo', `load the demo data set into a new database and print a key for it`)
    .action(async (options: { port?: string; host?: string; demo?: boolean }) => {
      const config = configFromEnvironment({ PORT: options.port, HOST: options.host });
      const { closeOnSignals, startServer } = await import('../../server.js');
      const { app, url, metricsUrl, demoKey } = await startServer(config, {
        demo: options.demo === true,
      });
      closeOnSignals(app);
      // Standard output carries the JSON logs; what a person should read goes to stderr.
      const lines = [`compplan is listening on ${url}`];
      if (metricsUrl) lines.push(`Prometheus metrics: ${metricsUrl}`);
      if (demoKey) {
        lines.push(
          '',
          `Loaded the demo data set (organisation "${DEMO_ORGANIZATION}") and generated a key for it.`,
          'It is shown only this once:',
          '',
          `  ${demoKey.key}`,
          '',
          'Try it:',
          `  curl -H "x-api-key: ${demoKey.key}" ${url}/v1/compensationPlanning/meritCycles`,
        );
      } else if (options.demo) {
        lines.push(
          `The demo data set is loaded. Make a key with: npx compplan keys create --org ${DEMO_ORGANIZATION}`,
        );
      }
      process.stderr.write(`${lines.join('\n')}\n\n`);
    });
}
