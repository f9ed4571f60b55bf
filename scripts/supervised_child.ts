// Preloaded (`node --import`) into the web and worker processes `npm start` runs (scripts/start.ts). They run in
// sessions of their own, so a terminal's Ctrl-C reaches only npm start, which stops them in order. If npm start
// itself is gone without doing so (killed, crashed), its IPC channel closes: this process then stops as on
// SIGTERM (its entry's orderly shutdown) rather than run on unsupervised, holding the port.
if (process.send) {
  process.on('disconnect', () => {
    process.stderr.write('npm start is gone: stopping\n');
    process.kill(process.pid, 'SIGTERM');
  });
  // Listening keeps the channel referenced; the process's life stays its entry's business.
  process.channel?.unref();
}

export {};
