/**
 * `cashout hash-password` as staff use it: on a terminal the password is asked for and not shown
 * as it is typed; the entry printed is one the dashboard accepts; a user name the dashboard would
 * refuse is refused here, before any password is read.
 */
import { describe, expect, it } from 'vitest';
import { parseUsers, verifyPassword } from '../../src/dashboard/users.js';
import { runCli, runCliOnTerminal } from '../support/cli.js';

const PASSWORD = 'correct horse battery staple';

describe('cashout hash-password', () => {
  it('on a terminal does not show the password as it is typed, and prints an entry the dashboard accepts', async () => {
    const r = await runCliOnTerminal(['hash-password', '--user', 'amira'], {}, [
      { prompt: 'Password: ', text: PASSWORD },
    ]);
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).not.toContain(PASSWORD);
    const entry = /amira:scrypt\$\S+/.exec(r.screen)![0];
    const users = parseUsers(entry, 'CASHOUT_DASHBOARD_USERS');
    expect(await verifyPassword(users, 'amira', PASSWORD)).toBe(true);
  });

  it('refuses a user name the dashboard would refuse (exit 2), naming what a name may hold', async () => {
    for (const user of ['ami:ra', 'a,b', 'two words']) {
      const r = await runCli(['hash-password', '--user', user]);
      expect(r.code, user).toBe(2);
      expect(r.stderr).toContain('a user name has 1 to 64 letters, digits');
      expect(r.stdout).toBe('');
    }
  });
});
