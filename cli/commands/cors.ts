/**
 * `catalog cors set ORIGIN | clear | show` (docs/decisions.md#gateway, #command-line): the one origin the gateway allows, on the local
 * store file or on CloudFront KeyValueStore. Setting an origin replaces the earlier one.
 */
import type { Command } from 'commander';
import { ConfigError } from '../../contract/errors.ts';
import { originProblem } from '../../keys/cors.ts';
import { type CliIO, noter } from '../io.ts';
import { addSettings, parseCommand } from '../options.ts';
import { openStore } from './keys.ts';

export function registerCors(program: Command, io: CliIO): void {
  const note = noter(io);
  const cors = program
    .command('cors')
    .description('Manage the one origin browsers may read the API from (off unless set).');
  /** The store a subcommand names; only `cors set` may start one. */
  const storeOf = async (command: Command, name: 'cors-set' | 'cors-clear' | 'cors-show') =>
    openStore(io, command, await parseCommand(command, name, io.env), name === 'cors-set');

  const set = addSettings(
    cors
      .command('set')
      .description('Allow one origin, replacing any earlier one. The key still never goes into browser code.')
      .argument('<origin>', 'exactly scheme://host[:port], such as https://partner.example'),
    'cors-set',
  );
  set.action(async (origin: string) => {
    const problem = originProblem(origin);
    if (problem !== undefined) throw new ConfigError(`ORIGIN ${JSON.stringify(origin)}: ${problem}`);
    const { store, takesEffect } = await storeOf(set, 'cors-set');
    const { setCorsOrigin } = await import('../../keys/cors.ts');
    const previous = await setCorsOrigin(store, origin);
    if (previous === origin) {
      note(`CORS origin already ${origin} in ${store.name}; nothing was changed`);
      return;
    }
    note(`CORS origin set to ${origin}${previous ? ` (replacing ${previous})` : ''} in ${store.name}`);
    note(`${takesEffect}.`);
  });

  const clear = addSettings(
    cors.command('clear').description('Turn CORS off: no Access-Control-* headers.'),
    'cors-clear',
  );
  clear.action(async () => {
    const { store, takesEffect } = await storeOf(clear, 'cors-clear');
    const { setCorsOrigin } = await import('../../keys/cors.ts');
    const previous = await setCorsOrigin(store);
    if (previous === undefined) {
      note(`CORS is already off in ${store.name}; nothing was changed`);
      return;
    }
    note(`CORS turned off (was ${previous}) in ${store.name}`);
    note(`${takesEffect}.`);
  });

  const show = addSettings(
    cors.command('show').description('Print the allowed origin on stdout; nothing when CORS is off.'),
    'cors-show',
  );
  show.action(async () => {
    const { store } = await storeOf(show, 'cors-show');
    const { showCorsOrigin } = await import('../../keys/cors.ts');
    const origin = await showCorsOrigin(store);
    if (origin === undefined) note(`CORS is off: no origin is set in ${store.name}`);
    else io.stdout(`${origin}\n`);
  });
}
