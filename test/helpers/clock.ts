// A clock a test moves by hand: what the code measures with it (key expiry, how long a
// kept answer has gone unconfirmed, an answer's age) passes in an instant, never slept on.

/** A wall clock that stands still (at the real time it was made) until a test moves it. */
export class TestClock {
  private at = Date.now();
  readonly now = () => this.at;
  advance(ms: number): void {
    this.at += ms;
  }
}
