import { INTERNAL_FIELDS, isInternalField } from './internal-fields';

describe('isInternalField', () => {
  const floor = [
    '_hashed_password',
    '_password_history',
    '_session_token',
    '_sessionToken',
    'sessionToken',
    'session_token',
    '_email_verify_token',
    '_perishable_token',
    '_failed_login_count',
    '_account_lockout_expires_at',
    '_rperm',
    '_wperm',
    '_tombstone',
    '_auth_data',
    // Once only in the pipeline validator's copy; one list since issue 31.
    'password',
    'ACL',
  ];

  it('contains the whole credential floor', () => {
    for (const name of floor) expect(INTERNAL_FIELDS.has(name)).toBe(true);
  });

  it.each(floor)('flags %s', (name) => expect(isInternalField(name)).toBe(true));

  it('flags authData and per-provider _auth_data_ columns', () => {
    expect(isInternalField('authData')).toBe(true);
    expect(isInternalField('_auth_data_facebook')).toBe(true);
    expect(isInternalField('_auth_data_')).toBe(true);
  });

  it('judges dotted paths by their root segment', () => {
    expect(isInternalField('authData.facebook.id')).toBe(true);
    expect(isInternalField('_auth_data_github.access_token')).toBe(true);
    expect(isInternalField('profile._hashed_password')).toBe(false);
  });

  it.each([
    'email',
    'username',
    'objectId',
    'acl',
    'passwordHint',
    'hashed_password',
    'sessionTokenCount',
    '_auth_datum',
    'auth_data',
    '',
  ])('does not flag %p', (name) => expect(isInternalField(name)).toBe(false));
});
