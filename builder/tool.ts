/** The tool that made a build, as its manifest records it: this package's name and version. */
import pkg from '../package.json' with { type: 'json' };

export const TOOL = { name: pkg.name, version: pkg.version } as const;
