import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import type { PricingInput } from '../types';
import { CliError } from './errors';
import { parseYaml, YamlError } from './yaml';

/**
 * A pricing body from a .json, .yaml or .yml file (other names: JSON when the text starts with
 * `{`, else YAML). Only the outer shape is checked here: the API validates the fields, and its 422
 * names each bad one (`body.rules.0.price_usd`), which is what the user needs to fix the file.
 */
export async function readPricingFile(file: string): Promise<PricingInput> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const data = parse(file, text);
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new CliError(`${file} must hold an object: default_price_usd and an optional list of rules ({path, price_usd})`);
  }
  return data as PricingInput;
}

function parse(file: string, text: string): unknown {
  const extension = extname(file).toLowerCase();
  const yaml = extension === '.yaml' || extension === '.yml' || (extension !== '.json' && !text.trimStart().startsWith('{'));
  try {
    return yaml ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    if (error instanceof YamlError) throw new CliError(`${file}: ${error.message}`);
    throw new CliError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
}
