// Preloaded (--require) into a CLI child: writes the moment its process exits to stderr, so a
// test measures the child's own work rather than when a loaded parent gets to its 'close'
// event. Pipes are written synchronously on Linux, so the line is out before the exit.
process.on('exit', () => process.stderr.write(`\nexit-at ${Date.now()}\n`));
