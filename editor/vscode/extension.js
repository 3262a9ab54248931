// The Iris extension's client: starts irisc-lsp (docs/editors.md) for .iris
// files, through vscode-languageclient. Highlighting needs no code: the
// grammar is declared in package.json.
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const settings = vscode.workspace.getConfiguration('iris.server');
  const server = { command: settings.get('path'), args: settings.get('arguments') };
  client = new LanguageClient('iris', 'Iris (irisc-lsp)', { run: server, debug: server }, {
    documentSelector: [{ scheme: 'file', language: 'iris' }],
  });
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
