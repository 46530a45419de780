import { extname } from 'node:path';
import type { PricingInput } from '../types';
import { CliError } from './errors';
import { readInputFile, STDIN } from './input-file';
import type { CliIo } from './io';
import { parseYaml, YamlError } from './yaml';

/**
 * A pricing body from a .json, .yaml or .yml file, or from standard input for `-` (other names
 * and stdin: JSON when the text starts with `{`, else YAML). Only the outer shape is checked here:
 * the API validates the fields, and its 422 names each bad one (`body.rules.0.price_usd`), which
 * is what the user needs to fix the file.
 */
export async function readPricingFile(file: string, io: CliIo): Promise<PricingInput> {
  const text = await readInputFile(file, io);
  const name = file === STDIN ? 'standard input' : file;
  const data = parse(file, name, text);
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new CliError(
      `${name} must hold an object: default_price_usd and an optional list of rules ({path, price_usd})`,
    );
  }
  return data as PricingInput;
}

function parse(file: string, name: string, text: string): unknown {
  const extension = file === STDIN ? '' : extname(file).toLowerCase();
  const yaml =
    extension === '.yaml' || extension === '.yml' || (extension !== '.json' && !text.trimStart().startsWith('{'));
  try {
    return yaml ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    if (error instanceof YamlError) throw new CliError(`${name}: ${error.message}`);
    throw new CliError(`${name} is not valid JSON: ${(error as Error).message}`);
  }
}
