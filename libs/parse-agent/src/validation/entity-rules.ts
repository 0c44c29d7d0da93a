import { AgentValidationError } from '../core/errors';
import {
  describeValidationErrors,
  loadClassValidator,
  type DtoClass,
  type ModuleLoader,
} from './dto';

/**
 * Applies the class-validator rules declared on a model class (`@IsEmail() email`, `@Min(0) total`)
 * to the values of a raw write. A create checks every rule; an update checks only the fields it
 * sends. Values arrive in wire names and are checked on the model's properties; the error names the
 * wire fields. A model without class-validator rules (or an app without class-validator) is not
 * checked: the library's own metadata (@AgentField and the like) is not a validation rule.
 */
export async function checkEntityRules(
  className: string,
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  model: Function | undefined,
  values: Record<string, unknown>,
  propertyToWire: Record<string, string>,
  mode: 'create' | 'update',
  load?: ModuleLoader,
): Promise<void> {
  if (!model) return;
  const validator = loadClassValidator(load);
  if (!validator) return;
  const target = model as unknown as DtoClass;
  const rules = validator
    .getMetadataStorage()
    .getTargetValidationMetadatas(target, '', true, false);
  if (!rules.length) return;
  const wireToProperty = new Map(Object.entries(propertyToWire).map(([p, w]) => [w, p]));
  // A bare object of the model's prototype with the sent values as own properties: no constructor
  // runs, and a Parse.Object subclass's accessors are shadowed rather than called.
  const subject = Object.create(target.prototype as object) as object;
  for (const [wire, value] of Object.entries(values)) {
    Object.defineProperty(subject, wireToProperty.get(wire) ?? wire, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  const errors = await validator.validate(subject, {
    skipMissingProperties: mode === 'update',
    forbidUnknownValues: false,
    validationError: { target: false, value: false },
  });
  if (!errors.length) return;
  const problems = describeValidationErrors(errors, (p) => propertyToWire[p] ?? p);
  throw new AgentValidationError(
    `values for '${className}' break its validation rules: ${problems.join('; ')}. Nothing was written; fix these values and call again.`,
  );
}
