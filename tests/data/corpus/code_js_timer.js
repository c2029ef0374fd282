// Pomodoro timer widget: renders into a container and persists state in localStorage.
const STORAGE_KEY = 'pomodoro-state-v2';
const DEFAULTS = { workMinutes: 25, breakMinutes: 5, longBreakMinutes: 15, roundsBeforeLong: 4 };

function loadState() {
  try {
    const raw = localStorage.getItem(STORAGE_KEY);
    return raw ? { ...DEFAULTS, ...JSON.parse(raw) } : { ...DEFAULTS, round: 0, phase: 'idle' };
  } catch (err) {
    console.warn('Ignoring corrupt timer state', err);
    return { ...DEFAULTS, round: 0, phase: 'idle' };
  }
}

function saveState(state) {
  localStorage.setItem(STORAGE_KEY, JSON.stringify(state));
}

function formatSeconds(total) {
  const m = Math.floor(total / 60);
  const s = total % 60;
  return `${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
}

export class PomodoroTimer {
  constructor(container, { onPhaseChange = () => {} } = {}) {
    this.container = container;
    this.state = loadState();
    this.onPhaseChange = onPhaseChange;
    this.intervalId = null;
    this.render();
  }

  nextPhase() {
    const { phase, round, roundsBeforeLong } = this.state;
    if (phase === 'work') {
      const long = (round + 1) % roundsBeforeLong === 0;
      return { phase: long ? 'long-break' : 'break', round: round + 1 };
    }
    return { phase: 'work', round };
  }

  durationOf(phase) {
    switch (phase) {
      case 'work':
        return this.state.workMinutes * 60;
      case 'break':
        return this.state.breakMinutes * 60;
      case 'long-break':
        return this.state.longBreakMinutes * 60;
      default:
        return 0;
    }
  }

  start() {
    if (this.intervalId !== null) return;
    if (this.state.phase === 'idle') {
      Object.assign(this.state, { phase: 'work', remaining: this.durationOf('work') });
    }
    this.intervalId = setInterval(() => this.tick(), 1000);
    this.render();
  }

  pause() {
    clearInterval(this.intervalId);
    this.intervalId = null;
    saveState(this.state);
    this.render();
  }

  tick() {
    this.state.remaining -= 1;
    if (this.state.remaining <= 0) {
      const next = this.nextPhase();
      Object.assign(this.state, next, { remaining: this.durationOf(next.phase) });
      this.onPhaseChange(next.phase);
    }
    saveState(this.state);
    this.render();
  }

  render() {
    const running = this.intervalId !== null;
    this.container.innerHTML = `
      <div class="timer timer--${this.state.phase}">
        <span class="timer__clock">${formatSeconds(this.state.remaining ?? 0)}</span>
        <button data-action="${running ? 'pause' : 'start'}">${running ? 'Pause' : 'Start'}</button>
        <small>Round ${this.state.round + 1}</small>
      </div>`;
    this.container.querySelector('button').addEventListener('click', (e) => {
      e.currentTarget.dataset.action === 'pause' ? this.pause() : this.start();
    });
  }
}
