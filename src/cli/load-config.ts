/** Reads configuration for a command, turning a bad value into a clear message and exit code 2. */
import { ConfigError, loadConfig, type Config } from '../config.js';

export function configOrExit(overrides: Partial<Config> = {}, env: Record<string, string | undefined> = process.env): Config {
  try {
    return loadConfig(env, overrides);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
