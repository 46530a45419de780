import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * A small reader of prisma/schema.prisma for the schema-drift test: tables, columns with their
 * PostgreSQL types and nullability, and unique column sets. It covers the syntax our schema uses.
 */

export interface SchemaColumn {
  column: string;
  /** information_schema.columns.data_type */
  dataType: string;
  nullable: boolean;
  /** character_maximum_length for CHAR/VARCHAR */
  length?: number;
}

export interface SchemaTable {
  model: string;
  table: string;
  columns: SchemaColumn[];
  /** Column sets that must carry a unique index or primary key. */
  uniques: string[][];
  /** Column lists, in order, that must carry a (non-unique) index. */
  indexes: string[][];
}

const SCALARS: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  BigInt: 'bigint',
  Boolean: 'boolean',
  DateTime: 'timestamp without time zone',
  Bytes: 'bytea',
  Json: 'jsonb',
  Decimal: 'numeric',
  Float: 'double precision',
};

const NATIVE: Record<string, string> = {
  Uuid: 'uuid',
  Char: 'character',
  VarChar: 'character varying',
  Timestamptz: 'timestamp with time zone',
  Date: 'date',
  Text: 'text',
};

export function readPrismaSchema(file = join(__dirname, '../../../prisma/schema.prisma')): SchemaTable[] {
  const source = readFileSync(file, 'utf8').replace(/\/\/.*$/gm, '');
  const enums = new Set([...source.matchAll(/^enum\s+(\w+)/gm)].map((match) => match[1]));
  const models = [...source.matchAll(/^model\s+(\w+)\s*\{([\s\S]*?)^\}/gm)];
  const modelNames = new Set(models.map((match) => match[1]));

  return models.map(([, model, body]) => {
    const lines = body
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    const table = /@@map\("([^"]+)"\)/.exec(body)?.[1] ?? model;
    const columnOf = new Map<string, string>();
    const columns: SchemaColumn[] = [];
    const uniques: string[][] = [];
    const indexes: string[][] = [];

    for (const line of lines.filter((l) => !l.startsWith('@@'))) {
      const [name, rawType] = line.split(/\s+/);
      const baseType = rawType.replace(/[?[\]]/g, '');
      if (modelNames.has(baseType)) continue; // relation field, no column
      const column = /@map\("([^"]+)"\)/.exec(line)?.[1] ?? name;
      columnOf.set(name, column);
      const native = /@db\.(\w+)(?:\((\d+)(?:,\s*\d+)?\))?/.exec(line);
      // A scalar list: Prisma creates the column as a nullable array (its default fills new rows).
      const list = rawType.endsWith('[]');
      const dataType = list
        ? 'ARRAY'
        : enums.has(baseType)
          ? 'USER-DEFINED'
          : native && NATIVE[native[1]]
            ? NATIVE[native[1]]
            : SCALARS[baseType];
      if (!dataType) throw new Error(`prisma-schema reader: unknown type ${rawType} on ${model}.${name}`);
      const length =
        native && (native[1] === 'Char' || native[1] === 'VarChar') && native[2] ? Number(native[2]) : undefined;
      columns.push({ column, dataType, nullable: list || rawType.endsWith('?'), ...(length ? { length } : {}) });
      if (/@id\b/.test(line) || /@unique\b/.test(line)) uniques.push([column]);
    }
    for (const match of body.matchAll(/@@(?:id|unique)\(\[([^\]]+)\]/g)) {
      uniques.push(match[1].split(',').map((field) => columnOf.get(field.trim()) ?? field.trim()));
    }
    for (const match of body.matchAll(/@@index\(\[([^\]]+)\]/g)) {
      indexes.push(match[1].split(',').map((field) => columnOf.get(field.trim()) ?? field.trim()));
    }
    return { model, table, columns, uniques, indexes };
  });
}
