import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * Answers checked against the served /openapi.json (OpenAPI 3.1: its schemas are JSON Schema 2020-12): the document
 * is added to Ajv whole, and a response schema is compiled by its JSON pointer, so `$ref`s resolve as a client's
 * generator resolves them.
 */
export interface OpenApiValidator {
  doc: OpenApiDoc;
  /** the schema at a pointer into the document (`#/paths/~1v1~1search/post/…`) as a validator: errors, or [] */
  validate(pointer: string, value: unknown): string[];
  /** the subschema below `pointer` that carries `description` (one branch of a union), as a pointer */
  branch(pointer: string, description: string): string;
}

export interface OpenApiDoc {
  paths: Record<string, Record<string, Operation>>;
  [k: string]: unknown;
}
export interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  [k: string]: unknown;
}

/** `/v1/search/{job_id}` → `~1v1~1search~1{job_id}` (RFC 6901). */
export const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export const responsePointer = (path: string, method: string, status: string, media: string) =>
  `#/paths/${escapePointer(path)}/${method}/responses/${status}/content/${escapePointer(media)}/schema`;

export const createOpenApiValidator = (doc: OpenApiDoc): OpenApiValidator => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(doc as object, 'openapi');
  const compiled = new Map<string, ReturnType<Ajv2020['compile']>>();
  const at = (pointer: string): unknown =>
    pointer
      .replace(/^#\//, '')
      .split('/')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], doc);
  return {
    doc,
    validate(pointer, value) {
      let check = compiled.get(pointer);
      if (!check) {
        check = ajv.compile({ $ref: `openapi${pointer}` });
        compiled.set(pointer, check);
      }
      if (check(value)) return [];
      return (check.errors ?? []).slice(0, 8).map((e) => {
        const extra = (e.params as { additionalProperty?: string }).additionalProperty;
        return `${e.instancePath || '/'} ${e.message}${extra ? `: ${extra}` : ''}`;
      });
    },
    branch(pointer, description) {
      const walk = (p: string): string | undefined => {
        const node = at(p) as Record<string, unknown> | undefined;
        if (!node || typeof node !== 'object') return undefined;
        if (node.description === description) return p;
        for (const k of ['anyOf', 'oneOf', 'allOf']) {
          const list = node[k];
          if (!Array.isArray(list)) continue;
          for (let i = 0; i < list.length; i++) {
            const found = walk(`${p}/${k}/${i}`);
            if (found) return found;
          }
        }
        return undefined;
      };
      const found = walk(pointer);
      if (!found) throw new Error(`no branch described "${description}" under ${pointer}`);
      return found;
    },
  };
};
