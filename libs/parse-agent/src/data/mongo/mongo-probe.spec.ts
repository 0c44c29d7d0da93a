import { probeMongo } from './mongo-probe';

describe('probeMongo', () => {
  const never = () => new Promise<never>(() => undefined);

  it('an application client is named as mongo.client', async () => {
    const mongo = await probeMongo(never, undefined, 10);
    expect(mongo).toMatchObject({ ok: false, setting: 'mongo.client' });
  });

  it('a MongoDB that never answers is reported at the time limit, naming mongo.uri without the password', async () => {
    const outcome = await probeMongo(never, 'mongodb://u:pw-secret@db.internal:27017/parse', 30);
    expect(outcome).toEqual({
      ok: false,
      setting: 'mongo.uri',
      transient: false,
      message: 'MongoDB at mongodb://db.internal:27017/parse did not answer within 30 ms.',
    });
  });

  it('a driver message quoting the password is scrubbed', async () => {
    const outcome = await probeMongo(
      () => Promise.reject(new Error('auth failed for u:pw-secret')),
      'mongodb://u:pw-secret@db.internal/parse',
      1_000,
    );
    expect(outcome.ok).toBe(false);
    expect(JSON.stringify(outcome)).not.toContain('pw-secret');
  });
});
