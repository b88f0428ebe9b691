/** Time and randomness behind one seam, so engine tests can control both. */
export interface Clock {
  now(): number;
  random(): number;
}

export const systemClock: Clock = { now: () => Date.now(), random: () => Math.random() };
