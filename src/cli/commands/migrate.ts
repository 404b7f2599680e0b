import type { Command } from 'commander';
import { openDatabase } from '../../db/connect.js';
import { migrateToLatest } from '../../db/migrate.js';
import { configFromEnvironment } from '../context.js';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('Bring the database schema up to date')
    .action(async () => {
      const database = openDatabase(configFromEnvironment().database);
      try {
        const applied = await migrateToLatest(database);
        console.log(
          applied.length === 0
            ? 'The database schema is up to date.'
            : `Applied ${applied.length} migration(s): ${applied.join(', ')}`,
        );
      } finally {
        await database.db.destroy();
      }
    });
}
