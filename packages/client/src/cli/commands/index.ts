/** The commands of the command line, by name, in the order `htmldrop --help` lists them. */
import type { Command } from '../context.js';
import { access, link } from './access.js';
import { feedback } from './feedback.js';
import { diff, restore } from './history.js';
import { listCommand, search, show, versions } from './list.js';
import { login, logout, whoami } from './login.js';
import { open } from './open.js';
import { passcode } from './passcode.js';
import { exportCommand, importCommand } from './portability.js';
import { publish, update } from './publish.js';
import { rm } from './remove.js';
import { resolve } from './resolve.js';
import { stats } from './stats.js';
import { revoke, tokens } from './tokens.js';
import { webhooks } from './webhooks.js';

/** Every command, by the name typed on the command line. */
export const COMMANDS: Readonly<Record<string, Command>> = {
  login,
  logout,
  whoami,
  publish,
  update,
  list: listCommand,
  search,
  show,
  versions,
  diff,
  restore,
  feedback,
  resolve,
  stats,
  link,
  access,
  rm,
  passcode,
  tokens,
  revoke,
  webhooks,
  open,
  export: exportCommand,
  import: importCommand,
};
