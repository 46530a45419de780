import { logRedactor } from './app/redacting-logger';
import { loadConfig } from './config/config';
import { openDatabase } from './db/database';
import { migrate } from './db/migrator';

/** Blanks the database URL's password from a failure's message. */
let redact = (text: string) => text;

/** `npm run migrate`: apply pending SQL migrations to DATABASE_URL, or to the embedded PGlite. */
async function main(): Promise<void> {
  const config = loadConfig();
  redact = logRedactor({ others: [config.databaseUrl] });
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const { applied } = await migrate(database.sql);
    console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date');
  } finally {
    await database.close();
  }
}

main().catch((error) => {
  console.error(redact(error instanceof Error ? error.message : String(error)));
  process.exit(1);
});
