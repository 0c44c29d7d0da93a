import Ajv, { type ValidateFunction } from 'ajv';
import {
  AccessDeniedError,
  AgentValidationError,
  ParseAgentConfigError,
} from '../../../core/errors';
import { isPlainObject } from '../../../core/plain-object';
import type { AgentMethodDeclaration } from '../../../metadata/metadata.types';
import type { DataRow } from '../../../ports/data-path';
import { validateDto } from '../../../validation/dto';
import { dryRunFlag } from '../dry-run-flag';
import { acceptedArgumentNames } from './agent-method-gate';

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new WeakMap<AgentMethodDeclaration, ValidateFunction>();

function parameterValidator(method: AgentMethodDeclaration): ValidateFunction | undefined {
  if (!method.parameters) return undefined;
  let validate = validators.get(method);
  if (!validate) {
    try {
      validate = ajv.compile(method.parameters);
    } catch (error) {
      throw new ParseAgentConfigError(
        `@AgentMethod ${method.name}: parameters is not a valid JSON Schema (${(error as Error).message}).`,
      );
    }
    validators.set(method, validate);
  }
  return validate;
}

/**
 * call_method's `arguments` for a method: the `dry_run` flag (a JSON boolean or nothing) and the
 * method's own arguments. Those are its permittedKeys when declared (the write boundary), else
 * the properties of its parameters schema, else none: anything else is refused, so a model
 * cannot mass-assign fields the author never meant to expose. Then they are validated: a DTO by
 * class-validator (the method receives the DTO instance), a JSON Schema by ajv.
 */
export async function methodArguments(
  qualified: string,
  method: AgentMethodDeclaration,
  sent: unknown,
): Promise<{ dryRun: boolean; args: DataRow }> {
  if (sent !== undefined && !isPlainObject(sent)) {
    throw new AgentValidationError('arguments must be an object.');
  }
  const { dry_run: dryRunArg, ...args } = sent ?? {};
  const dryRun = dryRunFlag(dryRunArg, 'arguments.dry_run');
  const accepted = acceptedArgumentNames(method);
  const extra = Object.keys(args).filter((k) => !accepted.includes(k));
  if (extra.length) {
    const message = `arguments: ${extra.map((k) => `'${k}'`).join(', ')} ${extra.length > 1 ? 'are' : 'is'} not accepted by '${qualified}'. ${accepted.length ? `Accepted: ${accepted.join(', ')}.` : 'It takes no arguments.'}`;
    // permittedKeys is a write boundary the author drew: crossing it is a refusal. Names that
    // come from the parameters (a DTO, a JSON Schema) are the method's signature: a name outside
    // it is a wrong argument, as a DTO rule failure is (invalid_argument for both).
    if (method.permittedKeys) {
      throw new AccessDeniedError(message, { kind: 'field_denied', deniedField: extra[0] });
    }
    throw new AgentValidationError(message);
  }
  if (method.parametersDto) {
    const dto = await validateDto(method.parametersDto, args, `arguments for '${qualified}'`);
    return { dryRun, args: dto as DataRow };
  }
  const validate = parameterValidator(method);
  if (validate && !validate(args)) {
    const problems = (validate.errors ?? [])
      .map(
        (e) =>
          `${e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'arguments'} ${e.message ?? 'is invalid'}`,
      )
      .join('; ');
    throw new AgentValidationError(`arguments for '${qualified}': ${problems}`);
  }
  return { dryRun, args };
}
