// What the timeline and the explorer share: the state at one position, as tables.

function cell(text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

function item(text, cls) {
  const li = document.createElement("li");
  li.textContent = text;
  if (cls) li.className = cls;
  return li;
}

// Each client's belief (with its token), link, session and queued messages.
function showClients(tbody, clients) {
  tbody.replaceChildren(...clients.map((client, c) => {
    const tr = document.createElement("tr");
    tr.dataset.belief = client.belief;
    const belief = client.token !== null ? client.belief + " (token " + client.token + ")" : client.belief;
    const queued = cell(client.queued.join("; ") || "nothing", "mono");
    queued.dataset.count = client.inbound;
    tr.append(cell("c" + c), cell(belief, client.belief === "holding" ? "holds" : ""), cell(client.link),
      cell(client.session + (client.expired ? " (expired)" : ""), client.expired ? "mono violated" : "mono"), queued);
    return tr;
  }));
}

// The nodes under the lock, their owners and watchers; a watched path with no node is marked.
function showNodes(tbody, nodes) {
  tbody.replaceChildren(...nodes.map((node) => {
    const tr = document.createElement("tr");
    const watches = node.watched_by.map((c) => c + " (data)").concat(node.children_watched_by.map((c) => c + " (children)"));
    const owner = node.absent ? "no node" : (node.owner || "persistent");
    tr.append(cell(node.path + (node.data ? " = " + node.data : ""), "mono"), cell(owner, node.absent ? "violated" : ""),
      cell(watches.join(", ")));
    return tr;
  }));
}

// Each safety and transition property and whether it holds here.
function checkItems(checks) {
  return checks.map(([name, holds]) => {
    const li = item(name + (holds ? " holds" : " VIOLATED"), holds ? "holds" : "violated");
    li.dataset.property = name;
    return li;
  });
}
