// Play: one step every PLAY_MS until the list's end (from its start when already there). A go-to target and
// detaching stop it (the stepper calls `stop`); stepping by hand meanwhile does not.

export const PLAY_MS = 1400; // one step per 1.4 s: time to read the card

export class Playback {
  /**
   * @param {{atEnd: () => boolean, step: () => void, restart: () => void, shown: (playing: boolean) => void}} to
   *   atEnd: whether the place is at the list's last step; step: one step on; restart: back to the first step;
   *   shown: tell the controls whether it plays
   * @param {{setInterval: typeof setInterval, clearInterval: typeof clearInterval}} [clock] the timers (a test's)
   */
  constructor(to, clock = globalThis) {
    this.to = to;
    this.clock = clock;
    this.timer = null;
  }

  get playing() {
    return this.timer !== null;
  }

  toggle() {
    if (this.playing) return this.stop();
    if (this.to.atEnd()) this.to.restart();
    this.timer = this.clock.setInterval(() => {
      if (this.to.atEnd()) return this.stop();
      this.to.step();
    }, PLAY_MS);
    this.to.shown(true);
  }

  stop() {
    this.clock.clearInterval(this.timer);
    this.timer = null;
    this.to.shown(false);
  }
}
