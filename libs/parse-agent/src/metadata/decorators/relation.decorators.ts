import { METADATA } from '../metadata.constants';
import type { ClassRef, RelationDeclaration } from '../metadata.types';
import { decoratorError } from './decorator-errors';

function addRelation(prototype: object, declaration: RelationDeclaration) {
  const target = prototype.constructor;
  const list = [
    ...((Reflect.getMetadata(METADATA.relations, target) ?? []) as RelationDeclaration[]),
  ];
  list.push(declaration);
  Reflect.defineMetadata(METADATA.relations, list, target);
}

function checkTarget(decorator: string, prototype: object, target: ClassRef) {
  if (typeof target !== 'string' && typeof target !== 'function') {
    throw decoratorError(
      decorator,
      prototype.constructor,
      'pass the target as a class name or a function returning the model class, e.g. () => Customer.',
    );
  }
}

/** A pointer column to another class (`Order.customer -> Customer`). */
export function BelongsTo(target: ClassRef, options: { field?: string } = {}): PropertyDecorator {
  return (prototype, propertyKey) => {
    checkTarget('BelongsTo', prototype, target);
    addRelation(prototype, {
      kind: 'belongsTo',
      property: String(propertyKey),
      field: options.field,
      target,
    });
  };
}

/**
 * The other side of a relation: `through: 'relation'` for a Parse Relation column on this class,
 * `'pointer'` (default) when the other class holds a pointer back here.
 */
export function HasMany(
  target: ClassRef,
  options: { through?: 'relation' | 'pointer'; field?: string } = {},
): PropertyDecorator {
  return (prototype, propertyKey) => {
    checkTarget('HasMany', prototype, target);
    if (
      options.through !== undefined &&
      options.through !== 'relation' &&
      options.through !== 'pointer'
    ) {
      throw decoratorError(
        'HasMany',
        prototype.constructor,
        "through must be 'relation' or 'pointer'.",
      );
    }
    addRelation(prototype, {
      kind: 'hasMany',
      property: String(propertyKey),
      field: options.field,
      target,
      through: options.through ?? 'pointer',
    });
  };
}
