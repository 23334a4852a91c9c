/** saga-streams CLI entry. The local stack (`dev`) and the ops commands land with issue 6. */
const [command = 'help'] = process.argv.slice(2);
console.error(`saga-streams ${command}: the local stack and CLI are not built yet; \`npm test\` runs the suites.`);
process.exitCode = command === 'help' ? 0 : 1;
