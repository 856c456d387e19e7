/** `.env.example` is what users copy: it must list every setting and parse as valid configuration. */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { join } from 'node:path';
import { CONFIG_DEFAULTS, CONFIG_KEYS, parseConfig } from '../src/config.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { SANDBOX_FAULT_SETTINGS } from '../src/sandbox/settings-help.js';

const text = readFileSync(join(PACKAGE_ROOT, '.env.example'), 'utf8');

describe('.env.example', () => {
  it("names every setting the program reads (the sandbox's SANDBOX_* faults too), and no other", () => {
    const named = [...text.matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]);
    expect(new Set(named)).toEqual(new Set([...CONFIG_KEYS, ...SANDBOX_FAULT_SETTINGS.map((s) => s.name)]));
  });

  it('parses as valid configuration with the documented defaults', () => {
    const config = parseConfig(parseEnv(text));
    expect(config.itemsPerRequest).toBe(50);
    expect(config.schedule).toBe('*/5 * * * *');
    expect(config.timezone).toBe('Africa/Cairo');
    expect(config.walletDailyLimit).toBe('60000.00');
    expect(config.requireApproval).toBe(false);
  });

  it.each(Object.keys(CONFIG_DEFAULTS))('gives %s the default the program applies (CONFIG_DEFAULTS)', (key) => {
    const config = parseConfig(parseEnv(text));
    const k = key as keyof typeof CONFIG_DEFAULTS;
    expect(config[k]).toEqual(CONFIG_DEFAULTS[k]);
  });
});
