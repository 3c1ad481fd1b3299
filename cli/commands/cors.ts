/**
 * `catalog cors set ORIGIN | clear | show` (docs/decisions.md#gateway, #command-line): the one origin the gateway allows, on the local
 * store file or on CloudFront KeyValueStore. Setting an origin replaces the earlier one.
 */
import type { Command } from 'commander';
import { ConfigError } from '../../contract/errors.ts';
import { originProblem } from '../../keys/cors.ts';
import { type CliIO, noter } from '../io.ts';
import { addSettings, parseCommand, settingsCommand } from '../options.ts';
import { openStore } from './keys.ts';

/** What each command here does, as its --help says. */
const HELP = {
  'cors-clear': 'Turn CORS off: no Access-Control-* headers.',
  'cors-show': 'Print the allowed origin on stdout; nothing when CORS is off.',
} as const;

export function registerCors(program: Command, io: CliIO): void {
  const note = noter(io);
  const cors = program
    .command('cors')
    .description('Manage the one origin browsers may read the API from (off unless set).');
  const set = addSettings(
    cors
      .command('set')
      .description('Allow one origin, replacing any earlier one. The key still never goes into browser code.')
      .argument('<origin>', 'exactly scheme://host[:port], such as https://partner.example'),
    'cors-set',
  );
  // The origin is checked before the settings are read (which may ask CloudFormation for the deployment's).
  set.action(async (origin: string) => {
    const problem = originProblem(origin);
    if (problem !== undefined) throw new ConfigError(`ORIGIN ${JSON.stringify(origin)}: ${problem}`);
    const settings = await parseCommand(set, 'cors-set', io.env);
    const { store, takesEffect } = await openStore(io, set, settings, true, 'cors set');
    const { setCorsOrigin } = await import('../../keys/cors.ts');
    const previous = await setCorsOrigin(store, origin);
    if (previous === origin) note(`CORS origin already ${origin} in ${store.name}; nothing was changed`);
    else {
      note(`CORS origin set to ${origin}${previous ? ` (replacing ${previous})` : ''} in ${store.name}`);
      note(`${takesEffect}.`);
    }
  });

  settingsCommand(cors, 'cors-clear', HELP['cors-clear'], io, async (settings, clear) => {
    const { store, takesEffect } = await openStore(io, clear, settings, false, 'cors clear');
    const { setCorsOrigin } = await import('../../keys/cors.ts');
    const previous = await setCorsOrigin(store);
    if (previous === undefined) note(`CORS is already off in ${store.name}; nothing was changed`);
    else {
      note(`CORS turned off (was ${previous}) in ${store.name}`);
      note(`${takesEffect}.`);
    }
  });

  settingsCommand(cors, 'cors-show', HELP['cors-show'], io, async (settings, show) => {
    const { store } = await openStore(io, show, settings);
    const { showCorsOrigin } = await import('../../keys/cors.ts');
    const origin = await showCorsOrigin(store);
    if (origin === undefined) note(`CORS is off: no origin is set in ${store.name}`);
    else io.stdout(`${origin}\n`);
  });
}
