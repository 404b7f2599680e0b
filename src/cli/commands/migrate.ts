import type { Command } from 'commander';
import { configFromEnvironment } from '../context.js';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('Bring the database schema up to date')
    .action(async () => {
      const { openDatabase } = await import('../../db/connect.js');
      const { migrateToLatest } = await import('../../db/migrate.js');
      const database = openDatabase(configFromEnvironment().database);
      try {
        const applied = await migrateToLatest(database);
        console.log(
          applied.length === 0
            ? 'The database schema is up to date.'
            : `Applied ${applied.length} migration(s): ${applied.join(', ')}`,
        );
      } finally {
        await database.close();
      }
    });
}
