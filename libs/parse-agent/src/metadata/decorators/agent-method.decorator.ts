import { isPermissionLevel } from '../../core/constants';
import { METADATA } from '../metadata.constants';
import type { AgentMethodDeclaration, AgentMethodOptions } from '../metadata.types';
import { decoratorError } from './decorator-errors';
import { dtoJsonSchema, isDtoClass } from '../../validation/dto';
import { isPlainObject } from '../../core/plain-object';

/** Declares a model method agents may call through `call_method`. */
export function AgentMethod(options: AgentMethodOptions = {}): MethodDecorator {
  return (targetOrPrototype, propertyKey) => {
    const isStatic = typeof targetOrPrototype === 'function';
    // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
    const target = (isStatic ? targetOrPrototype : targetOrPrototype.constructor) as Function;
    if (options.permission !== undefined && !isPermissionLevel(options.permission)) {
      throw decoratorError(
        'AgentMethod',
        target,
        `permission must be readonly, write or admin (got ${JSON.stringify(options.permission)}).`,
      );
    }
    if (options.permittedKeys !== undefined && !Array.isArray(options.permittedKeys)) {
      throw decoratorError('AgentMethod', target, 'permittedKeys must be an array of field names.');
    }
    const dto = isDtoClass(options.parameters) ? options.parameters : undefined;
    if (options.parameters !== undefined && !dto && !isPlainObject(options.parameters)) {
      throw decoratorError(
        'AgentMethod',
        target,
        'parameters must be a JSON Schema object or a class-validator DTO class.',
      );
    }
    const list = [
      ...((Reflect.getMetadata(METADATA.methods, target) ?? []) as AgentMethodDeclaration[]),
    ];
    list.push({
      ...options,
      // A DTO's schema is derived once, here; calls are validated with the class itself.
      ...(dto
        ? { parameters: dtoJsonSchema(dto), parametersDto: dto }
        : { parameters: options.parameters as Record<string, unknown> | undefined }),
      permission: options.permission ?? 'readonly',
      name: String(propertyKey),
      static: isStatic,
    });
    Reflect.defineMetadata(METADATA.methods, list, target);
  };
}
