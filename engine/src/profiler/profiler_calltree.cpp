// The call tree of a stored profile (See Note [call tree] in profiler.h). Torch-free.
#include <algorithm>
#include <map>
#include <numeric>

#include "profiler/profiler.h"

namespace ts {

namespace {

// The child of `parent` named `name` of `kind`, made when missing.
class CallTreeBuilder {
public:
    CallTreeBuilder() {
        CallTreeNode root;
        root.name = "all";
        root.kind = CallNodeKind::Root;
        tree_.nodes.push_back(std::move(root));
        index_.emplace_back();
    }
    int child(int parent, const std::string& name, CallNodeKind kind) {
        const auto key = std::make_pair(static_cast<int>(kind), name);
        const auto& known = index_[static_cast<size_t>(parent)];
        if (auto it = known.find(key); it != known.end()) return it->second;
        CallTreeNode n;
        n.name = name;
        n.kind = kind;
        n.parent = parent;
        n.depth = tree_.nodes[static_cast<size_t>(parent)].depth + 1;
        const int id = static_cast<int>(tree_.nodes.size());
        tree_.nodes.push_back(std::move(n));
        tree_.nodes[static_cast<size_t>(parent)].children.push_back(id);
        index_.emplace_back();  // may move the parent's map: looked up again below
        index_[static_cast<size_t>(parent)].emplace(key, id);
        return id;
    }
    CallTree& tree() { return tree_; }

private:
    CallTree tree_;
    std::vector<std::map<std::pair<int, std::string>, int>> index_;
};

// Each op's parent op (-1: top level) from the nesting of one thread's intervals.
std::vector<long> parentOps(const std::vector<ProfiledOp>& ops) {
    std::vector<size_t> order(ops.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        const auto &a = ops[x], &b = ops[y];
        if (a.thread != b.thread) return a.thread < b.thread;
        if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
        return a.end_ns > b.end_ns;
    });
    std::vector<long> parent(ops.size(), -1);
    std::vector<size_t> stack;
    for (size_t n = 0; n < order.size(); ++n) {
        const ProfiledOp& e = ops[order[n]];
        if (n > 0 && ops[order[n - 1]].thread != e.thread) stack.clear();
        while (!stack.empty()) {
            const ProfiledOp& top = ops[stack.back()];
            if (top.start_ns <= e.start_ns && e.end_ns <= top.end_ns) break;
            stack.pop_back();
        }
        // A stored top-level op stays one even inside another's interval (a range between them
        // on the thread made attribute() see it so).
        if (!stack.empty() && !e.top_level) parent[order[n]] = static_cast<long>(stack.back());
        stack.push_back(order[n]);
    }
    return parent;
}

void sortAndSum(CallTree& t, int id) {
    CallTreeNode& n = t.nodes[static_cast<size_t>(id)];
    double inclusive = 0, device = 0;
    for (int c : n.children) {
        sortAndSum(t, c);
        inclusive += t.nodes[static_cast<size_t>(c)].inclusive_us;
        device += t.nodes[static_cast<size_t>(c)].device_us;
    }
    CallTreeNode& m = t.nodes[static_cast<size_t>(id)];  // the vector did not grow: same node
    if (m.kind != CallNodeKind::Op) {
        m.inclusive_us = inclusive;
        m.device_us = device;
    }
    std::stable_sort(m.children.begin(), m.children.end(), [&](int a, int b) {
        return t.nodes[static_cast<size_t>(a)].inclusive_us >
               t.nodes[static_cast<size_t>(b)].inclusive_us;
    });
}

}  // namespace

std::string CallTree::path(int node) const {
    std::string out;
    for (int n = node; n > 0; n = nodes[static_cast<size_t>(n)].parent)
        out = out.empty() ? nodes[static_cast<size_t>(n)].name
                          : nodes[static_cast<size_t>(n)].name + "/" + out;
    return out;
}

CallTree callTree(const AttributedTrace& trace) {
    const auto& ops = trace.ops;
    if (ops.empty()) return {};
    const std::vector<long> parent = parentOps(ops);
    CallTreeBuilder b;
    // Each op's node, once its parent's is known: parents first (an op starts no earlier than
    // its parent and ends no later, so the outer-first order of parentOps would do; a plain
    // recursion with memo is simpler to trust).
    std::vector<int> node_of(ops.size(), -1);
    std::vector<size_t> chain;
    for (size_t i = 0; i < ops.size(); ++i) {
        chain.clear();
        for (long k = static_cast<long>(i); k >= 0 && node_of[static_cast<size_t>(k)] < 0;
             k = parent[static_cast<size_t>(k)])
            chain.push_back(static_cast<size_t>(k));
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            const ProfiledOp& op = ops[*it];
            int at;
            if (const long p = parent[*it]; p >= 0) {
                at = node_of[static_cast<size_t>(p)];
            } else {
                at = b.child(0, std::string(toString(op.phase)), CallNodeKind::Phase);
                size_t begin = 0;
                while (begin < op.range.size()) {
                    size_t end = op.range.find('/', begin);
                    if (end == std::string::npos) end = op.range.size();
                    if (end > begin)
                        at = b.child(at, op.range.substr(begin, end - begin), CallNodeKind::Range);
                    begin = end + 1;
                }
            }
            const int id = b.child(at, op.name, CallNodeKind::Op);
            CallTreeNode& n = b.tree().nodes[static_cast<size_t>(id)];
            n.calls += 1;
            n.inclusive_us += static_cast<double>(op.end_ns - op.start_ns) / 1e3;
            n.self_us += static_cast<double>(op.self_ns) / 1e3;
            n.device_us += static_cast<double>(op.device_ns) / 1e3;
            node_of[*it] = id;
        }
    }
    CallTree t = std::move(b.tree());
    sortAndSum(t, 0);
    return t;
}

std::vector<int> callTreeRows(const CallTree& tree, int max_depth, double min_share) {
    std::vector<int> out;
    if (tree.nodes.empty()) return out;
    const double total = tree.nodes[0].inclusive_us;
    std::vector<int> todo = {0};
    while (!todo.empty()) {
        const int id = todo.back();
        todo.pop_back();
        const CallTreeNode& n = tree.nodes[static_cast<size_t>(id)];
        if (id != 0 && total > 0 && n.inclusive_us < min_share * total) continue;
        out.push_back(id);
        if (max_depth > 0 && n.depth >= max_depth) continue;
        for (auto it = n.children.rbegin(); it != n.children.rend(); ++it) todo.push_back(*it);
    }
    return out;
}

}  // namespace ts
