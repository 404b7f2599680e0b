import type { Command } from 'commander';
import { DEMO_ORGANIZATION } from '../../demo/organization.js';
import { configFromEnvironment, withDatabase } from '../context.js';
import { describeSummary } from './import.js';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description(`Load the demo data set (organisation "${DEMO_ORGANIZATION}")`)
    .action(async () => {
      const { demoDataSet } = await import('../../demo/data-set.js');
      const { importDataSet } = await import('../../import/load.js');
      const summary = await withDatabase(configFromEnvironment(), (database) =>
        importDataSet(database, demoDataSet()),
      );
      console.log(describeSummary(summary));
      console.log(`Create a key with: npx compplan keys create --org ${DEMO_ORGANIZATION}`);
    });
}
