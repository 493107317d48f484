"""Context packs end to end (SPEC §3, §4, §11) on realistic fixture repositories.

Three repositories are written at test time: a small Python web shop (services, models, views,
tests, a French translation catalog, a ``.env`` canary, and a module with a planted RSA private
key block and a GitHub token), a TypeScript package, and a small Go service. Every pack is
checked by the standalone ``scripts/verify_pack.py``, against the shipped JSON Schema, for
budget truth, determinism, pins and secret hygiene.
"""

from __future__ import annotations

import base64
import hashlib
import io
import itertools
import json
import random
import re
import string
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import excerpt.deliver as deliver
from conftest import git, git_commit_all, tree_snapshot, write_tree
from excerpt.cli import main
from excerpt.core.tokens import o200k_count
from excerpt.pack import PackRequest, pack_schema
from excerpt.pack.build import select
from excerpt.pipeline import export_graph

# -- fixture repositories --------------------------------------------------------------------

_RNG = random.Random(20240601)
GH_TOKEN = "ghp_" + "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(36))
KEY_BODY = [
    "".join(_RNG.choice(string.ascii_letters + string.digits + "+/") for _ in range(64))
    for _ in range(6)
]
KEY_BEGIN = "-----BEGIN RSA PRIVATE KEY-----"
KEY_END = "-----END RSA PRIVATE KEY-----"
# a key pasted into the docs and cut off: no END line, so everything after BEGIN is secret
LOOSE_KEY_BEGIN = "-----BEGIN OPENSSH PRIVATE KEY-----"
LOOSE_KEY_BODY = [
    "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(70)) for _ in range(3)
]
ENV_CANARY = "CANARY-" + "".join(_RNG.choice(string.ascii_lowercase) for _ in range(24))

SIGNING_PY = (
    '"""Webhook signing for the payment provider and the deploy bot."""\n'
    "\n"
    "import hashlib\n"
    "import hmac\n"
    "\n"
    "DEPLOY_BOT_LOGIN = 'shop-deploy-bot'\n"
    f"GITHUB_TOKEN = '{GH_TOKEN}'\n"
    "\n"
    'WEBHOOK_SIGNING_KEY = """\n'
    f"{KEY_BEGIN}\n" + "".join(f"{line}\n" for line in KEY_BODY) + f"{KEY_END}\n"
    '"""\n'
    "\n"
    "\n"
    "def sign_webhook(payload: bytes) -> str:\n"
    "    digest = hmac.new(WEBHOOK_SIGNING_KEY.encode(), payload, hashlib.sha256)\n"
    "    return digest.hexdigest()\n"
    "\n"
    "\n"
    "def verify_webhook_signature(payload: bytes, signature: str) -> bool:\n"
    "    return hmac.compare_digest(sign_webhook(payload), signature)\n"
)

REFUND_PY = '''\
"""Refunds: issue a refund for an order and retry the provider webhook."""

from __future__ import annotations

import logging
import time

from app.models import Order, Refund
from app.services.payment import PaymentGateway
from app.services.notifications import notify_customer

log = logging.getLogger(__name__)

MAX_WEBHOOK_RETRIES = 5


class RefundError(Exception):
    """A refund the provider rejected."""


class RefundService:
    """Issues refunds through the payment gateway."""

    def __init__(self, gateway: PaymentGateway) -> None:
        self.gateway = gateway

    def refund(self, order: Order, amount_cents: int) -> Refund:
        if amount_cents <= 0:
            raise RefundError("refund amount must be positive")
        if amount_cents > order.total_cents - order.refunded_cents:
            raise RefundError("refund exceeds the captured amount")
        provider_id = self.gateway.refund(order.payment_id, amount_cents)
        refund = Refund(order_id=order.id, amount_cents=amount_cents, provider_id=provider_id)
        order.refunded_cents += amount_cents
        notify_customer(order.customer_email, "refund_issued", amount_cents)
        return refund

    def retry_refund_webhook(self, refund: Refund, attempt: int = 0) -> bool:
        """Re-deliver the refund webhook with exponential backoff."""
        while attempt < MAX_WEBHOOK_RETRIES:
            if self.gateway.deliver_webhook("refund.updated", refund.provider_id):
                return True
            attempt += 1
            time.sleep(2**attempt)
        log.warning("refund webhook gave up after %d attempts", attempt)
        return False


def refund_summary(refund: Refund) -> str:
    return f"{refund.order_id}: {refund.amount_cents} cents"
'''

MODELS_PY = '''\
"""Domain models of the shop — customers, orders, refunds (prix en €)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Customer:
    id: int
    email: str
    name: str


@dataclass
class Order:
    id: int
    customer_email: str
    payment_id: str
    total_cents: int
    refunded_cents: int = 0
    lines: list[str] = field(default_factory=list)

    @property
    def is_fully_refunded(self) -> bool:
        return self.refunded_cents >= self.total_cents


@dataclass
class Refund:
    order_id: int
    amount_cents: int
    provider_id: str
'''

PAYMENT_PY = '''\
"""The payment provider gateway."""

from __future__ import annotations

import json
import urllib.request


class PaymentGateway:
    """A thin client of the payment provider's HTTP API."""

    def __init__(self, base_url: str, api_key: str) -> None:
        self.base_url = base_url
        self.api_key = api_key

    def _post(self, path: str, body: dict) -> dict:
        request = urllib.request.Request(
            self.base_url + path,
            data=json.dumps(body).encode(),
            headers={"Authorization": "Bearer " + self.api_key},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def charge(self, payment_id: str, amount_cents: int) -> str:
        return self._post("/charges", {"payment": payment_id, "amount": amount_cents})["id"]

    def refund(self, payment_id: str, amount_cents: int) -> str:
        return self._post("/refunds", {"payment": payment_id, "amount": amount_cents})["id"]

    def deliver_webhook(self, event: str, object_id: str) -> bool:
        return bool(self._post("/webhooks/deliver", {"event": event, "id": object_id}))
'''

NOTIFICATIONS_PY = '''\
"""Customer e-mails."""

from __future__ import annotations

TEMPLATES = {
    "refund_issued": "Your refund of {amount} has been issued.",
    "order_shipped": "Your order is on its way.",
}


def notify_customer(email: str, template: str, amount_cents: int = 0) -> str:
    body = TEMPLATES[template].format(amount=amount_cents / 100)
    return f"to={email}\\n{body}"
'''

ORDERS_VIEW_PY = '''\
"""HTTP views for orders."""

from __future__ import annotations

from app.models import Order
from app.services.payment import PaymentGateway
from app.services.refund import RefundService
from app.settings import PAYMENT_API_URL, PAYMENT_API_KEY


def order_detail(order: Order) -> dict:
    return {"id": order.id, "total": order.total_cents, "refunded": order.refunded_cents}


def refund_order(order: Order, amount_cents: int) -> dict:
    service = RefundService(PaymentGateway(PAYMENT_API_URL, PAYMENT_API_KEY))
    refund = service.refund(order, amount_cents)
    return {"refund": refund.provider_id, "order": order_detail(order)}
'''

WEBHOOKS_VIEW_PY = '''\
"""Incoming provider webhooks."""

from __future__ import annotations

from app.integrations.signing import verify_webhook_signature


def handle_provider_webhook(payload: bytes, signature: str) -> int:
    if not verify_webhook_signature(payload, signature):
        return 401
    return 204
'''

SETTINGS_PY = '''\
"""Settings read from the environment."""

import os

PAYMENT_API_URL = os.environ.get("PAYMENT_API_URL", "https://payments.invalid")
PAYMENT_API_KEY = os.environ.get("PAYMENT_API_KEY", "")
DEBUG = os.environ.get("DEBUG") == "1"
'''

TEST_REFUND_PY = """\
from app.models import Order
from app.services.refund import RefundError, RefundService


class FakeGateway:
    def refund(self, payment_id, amount_cents):
        return "re_1"

    def deliver_webhook(self, event, object_id):
        return True


def test_refund_reduces_the_refundable_amount():
    order = Order(id=1, customer_email="a@b.invalid", payment_id="p", total_cents=500)
    RefundService(FakeGateway()).refund(order, 200)
    assert order.refunded_cents == 200


def test_refund_over_the_total_is_rejected():
    order = Order(id=1, customer_email="a@b.invalid", payment_id="p", total_cents=500)
    try:
        RefundService(FakeGateway()).refund(order, 900)
    except RefundError:
        return
    raise AssertionError("expected RefundError")
"""

TEST_ORDERS_PY = """\
from app.models import Order
from app.views.orders import order_detail


def test_order_detail_reports_totals():
    order = Order(id=3, customer_email="c@d.invalid", payment_id="p", total_cents=100)
    assert order_detail(order)["total"] == 100
"""

DJANGO_PO = """\
# French translations of the shop.
msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"

msgid "Your refund of {amount} has been issued."
msgstr "Votre remboursement de {amount} a été émis (refund)."

msgid "refund exceeds the captured amount"
msgstr "le remboursement (refund) dépasse le montant capturé"

msgid "refund webhook retry"
msgstr "nouvelle tentative du webhook de remboursement (refund)"
"""

PY_SHOP: dict[str, str] = {
    "app/__init__.py": '"""The shop application."""\n',
    "app/models.py": MODELS_PY,
    "app/settings.py": SETTINGS_PY,
    "app/services/__init__.py": "",
    "app/services/refund.py": REFUND_PY,
    "app/services/payment.py": PAYMENT_PY,
    "app/services/notifications.py": NOTIFICATIONS_PY,
    "app/views/__init__.py": "",
    "app/views/orders.py": ORDERS_VIEW_PY,
    "app/views/webhooks.py": WEBHOOKS_VIEW_PY,
    "app/integrations/__init__.py": "",
    "app/integrations/signing.py": SIGNING_PY,
    "tests/test_refund.py": TEST_REFUND_PY,
    "tests/test_orders.py": TEST_ORDERS_PY,
    "locale/fr/LC_MESSAGES/django.po": DJANGO_PO,
    "README.md": "# Shop\n\nOrders, payments and refunds. Run `pytest`.\n",
    "docs/key-rotation.md": "# Deploy key rotation\n\nRotate the deploy key yearly. Old key:\n\n"
    + f"{LOOSE_KEY_BEGIN}\n"
    + "".join(f"{line}\n" for line in LOOSE_KEY_BODY),
    "pyproject.toml": '[project]\nname = "shop"\nversion = "0.1.0"\n',
    ".env": f"PAYMENT_API_KEY={ENV_CANARY}\nDEBUG=1\n",
    "config/.env.production": f"PAYMENT_API_KEY={ENV_CANARY}-prod\n",
    ".gitignore": "__pycache__/\n",
}

TS_CART = """\
import { Money, addMoney, zero } from "./utils/currency";
import { applyDiscount, Discount } from "./pricing/discount";

export interface CartLine {
  sku: string;
  quantity: number;
  unitPrice: Money;
}

export class Cart {
  private lines: CartLine[] = [];

  addLine(line: CartLine): void {
    const existing = this.lines.find((l) => l.sku === line.sku);
    if (existing) {
      existing.quantity += line.quantity;
    } else {
      this.lines.push({ ...line });
    }
  }

  removeLine(sku: string): void {
    this.lines = this.lines.filter((l) => l.sku !== sku);
  }

  subtotal(): Money {
    return this.lines.reduce(
      (sum, l) => addMoney(sum, { cents: l.unitPrice.cents * l.quantity, currency: sum.currency }),
      zero("EUR"),
    );
  }

  total(discount?: Discount): Money {
    const sub = this.subtotal();
    return discount ? applyDiscount(sub, discount) : sub;
  }
}
"""

TS_CURRENCY = """\
export interface Money {
  cents: number;
  currency: string;
}

export function zero(currency: string): Money {
  return { cents: 0, currency };
}

export function addMoney(a: Money, b: Money): Money {
  if (a.currency !== b.currency) {
    throw new Error(`currency mismatch: ${a.currency} vs ${b.currency}`);
  }
  return { cents: a.cents + b.cents, currency: a.currency };
}

export function formatMoney(m: Money): string {
  return `${(m.cents / 100).toFixed(2)} ${m.currency}`;
}
"""

TS_DISCOUNT = """\
import { Money } from "../utils/currency";

export type Discount =
  | { kind: "percent"; percent: number }
  | { kind: "fixed"; amount: Money };

export function applyDiscount(total: Money, discount: Discount): Money {
  if (discount.kind === "percent") {
    const off = Math.round((total.cents * discount.percent) / 100);
    return { cents: Math.max(0, total.cents - off), currency: total.currency };
  }
  return { cents: Math.max(0, total.cents - discount.amount.cents), currency: total.currency };
}
"""

TS_CHECKOUT = """\
import { Cart } from "./cart";
import { ApiClient } from "./api/client";
import { formatMoney } from "./utils/currency";

export async function checkout(cart: Cart, client: ApiClient): Promise<string> {
  const total = cart.total();
  if (total.cents <= 0) {
    throw new Error("cannot check out an empty cart");
  }
  const order = await client.post("/orders", { total: total.cents, currency: total.currency });
  return `order ${order.id} placed for ${formatMoney(total)}`;
}
"""

TS_CLIENT = """\
export class ApiClient {
  constructor(private readonly baseUrl: string, private readonly token: string) {}

  async post(path: string, body: unknown): Promise<{ id: string }> {
    const response = await fetch(this.baseUrl + path, {
      method: "POST",
      headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      throw new Error(`api error ${response.status}`);
    }
    return (await response.json()) as { id: string };
  }
}
"""

TS_MARKDOWN = """\
/** Render a receipt as Markdown for the support inbox. */
export function receiptMarkdown(orderId: string, total: string): string {
  return [
    `# Receipt ${orderId}`,
    "```",
    `total: ${total}`,
    "```",
  ].join("\\n");
}
"""

TS_CHECKOUT_SPEC = """\
import { Cart } from "../src/cart";
import { checkout } from "../src/checkout";

describe("checkout", () => {
  it("rejects an empty cart", async () => {
    const client = { post: async () => ({ id: "o1" }) };
    await expect(checkout(new Cart(), client as never)).rejects.toThrow("empty cart");
  });
});
"""

TS_PKG: dict[str, str] = {
    "package.json": '{\n  "name": "cart-kit",\n  "version": "1.2.0",\n'
    '  "scripts": {"test": "jest"}\n}\n',
    "tsconfig.json": '{\n  "compilerOptions": {"strict": true, "target": "es2022"}\n}\n',
    # no final newline: the last line of a file may have no terminator
    "src/index.ts": 'export { Cart } from "./cart";\nexport { checkout } from "./checkout";',
    "src/cart.ts": TS_CART,
    "src/checkout.ts": TS_CHECKOUT,
    "src/utils/currency.ts": TS_CURRENCY,
    "src/pricing/discount.ts": TS_DISCOUNT,
    "src/api/client.ts": TS_CLIENT,
    "src/receipt.ts": TS_MARKDOWN,
    "test/checkout.spec.ts": TS_CHECKOUT_SPEC,
    "README.md": "# cart-kit\n\nA shopping cart with discounts and checkout.\n",
    ".env.local": f"API_TOKEN={ENV_CANARY}\n",
}

GO_MAIN = """\
package main

import (
\t"fmt"
\t"net/http"

\t"example.com/inventory/stock"
)

func main() {
\tstore := stock.NewStore()
\thttp.HandleFunc("/reserve", func(w http.ResponseWriter, r *http.Request) {
\t\tif err := store.Reserve(r.URL.Query().Get("sku"), 1); err != nil {
\t\t\thttp.Error(w, err.Error(), http.StatusConflict)
\t\t\treturn
\t\t}
\t\tfmt.Fprintln(w, "reserved")
\t})
\t_ = http.ListenAndServe(":8080", nil)
}
"""

GO_STOCK = """\
package stock

import (
\t"errors"
\t"sync"
)

// ErrOutOfStock is returned when a reservation exceeds what is on hand.
var ErrOutOfStock = errors.New("out of stock")

// Store tracks stock levels per SKU.
type Store struct {
\tmu     sync.Mutex
\tlevels map[string]int
}

// NewStore returns an empty store.
func NewStore() *Store {
\treturn &Store{levels: map[string]int{}}
}

// Reserve takes quantity units of sku off the shelf.
func (s *Store) Reserve(sku string, quantity int) error {
\ts.mu.Lock()
\tdefer s.mu.Unlock()
\tif s.levels[sku] < quantity {
\t\treturn ErrOutOfStock
\t}
\ts.levels[sku] -= quantity
\treturn nil
}

// Restock adds quantity units of sku.
func (s *Store) Restock(sku string, quantity int) {
\ts.mu.Lock()
\tdefer s.mu.Unlock()
\ts.levels[sku] += quantity
}
"""

GO_STOCK_TEST = """\
package stock

import "testing"

func TestReserveFailsWhenOutOfStock(t *testing.T) {
\ts := NewStore()
\tif err := s.Reserve("apple", 1); err != ErrOutOfStock {
\t\tt.Fatalf("got %v", err)
\t}
}
"""

GO_SVC: dict[str, str] = {
    "go.mod": "module example.com/inventory\n\ngo 1.22\n",
    "main.go": GO_MAIN,
    "stock/store.go": GO_STOCK,
    "stock/store_test.go": GO_STOCK_TEST,
    "docs/notes.md": "Windows line endings.\r\nReserve then restock.\r\nstock 50%\rstock 100%\r\n",
}

FIXTURES = {"py_shop": PY_SHOP, "ts_pkg": TS_PKG, "go_svc": GO_SVC}


# -- helpers ---------------------------------------------------------------------------------

VERIFY = Path(__file__).resolve().parents[1] / "scripts" / "verify_pack.py"
FENCE_LANG = {".py": "python", ".ts": "typescript", ".go": "go", ".md": "markdown"}
Doc = dict[str, Any]


def line_of(text: str, needle: str, after: int = 0) -> int:
    """The 1-based number of the first line after line ``after`` that contains ``needle``."""
    for number, line in enumerate(text.split("\n"), start=1):
        if number > after and needle in line:
            return number
    raise AssertionError(f"{needle!r} not in fixture text")


def file_lines(repo: Path, path: str) -> list[bytes]:
    """SPEC §3.1 lines: each ends at ``\\n`` and keeps it; a lone ``\\r`` ends nothing."""
    parts = (repo / path).read_bytes().split(b"\n")
    return [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def lines_bytes(repo: Path, path: str, start: int, end: int) -> int:
    return sum(len(line) for line in file_lines(repo, path)[start - 1 : end])


def delivered_of(repo: Path, task: str, cache: Path, budget: int = 32_000, **kw: Any) -> Doc:
    """The pack a surface delivers: its whole rendering fitted to the budget."""
    request = PackRequest(repo=repo, task=task, budget=budget, cache_dir=cache, **kw)
    return dict(deliver.build_pack(request).pack.to_dict())


def pack_of(repo: Path, task: str, cache: Path, budget: int = 32_000, **kw: Any) -> Doc:
    """The selection beneath the rendering: excerpt text within the budget, handles
    remembered as a served pack's are."""
    request = PackRequest(repo=repo, task=task, budget=budget, cache_dir=cache, **kw)
    prep = deliver.prepare(request)
    pack = select(prep, task, budget)
    deliver.remember_pack(prep, pack)
    return dict(pack.to_dict())


def plan_of(repo: Path, task: str, cache: Path, **kw: Any) -> Doc:
    return dict(
        deliver.build_plan(PackRequest(repo=repo, task=task, cache_dir=cache, **kw)).plan.to_dict()
    )


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def recomputed_pack_id(pack: Doc) -> str:
    body = {k: v for k, v in pack.items() if k != "pack_id"}
    return "sha256:" + hashlib.sha256(canonical(body)).hexdigest()


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_verify(pack: Doc | str, repo: Path, where: Path) -> subprocess.CompletedProcess[str]:
    where.mkdir(parents=True, exist_ok=True)
    target = where / "pack.json"
    text = pack if isinstance(pack, str) else json.dumps(pack, ensure_ascii=False)
    target.write_text(text, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(VERIFY), str(target), "--repo", str(repo)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def signals(entry: Doc) -> list[str]:
    return [r["signal"] for r in entry["reasons"]]


def first_index(items: list[Doc], path: str) -> int:
    return next(i for i, item in enumerate(items) if item["path"] == path)


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The three fixture repositories, committed; read-only for the tests that share them."""
    base = tmp_path_factory.mktemp("fixtures")
    out = {}
    for name, files in FIXTURES.items():
        root = write_tree(base / name, files)
        git_commit_all(root)
        out[name] = root
    return out


@pytest.fixture
def shop(make_repo: Callable[..., Path]) -> Path:
    """A private copy of the Python shop, for tests that edit or stage files."""
    return make_repo(PY_SHOP, name="shop")


# The tasks every fixture is packed for, in the verify, schema and budget tests.
TASKS = {
    "py_shop": [
        "fix the refund webhook retry",
        "RefundService.refund double counts partial refunds",
        "rotate the GITHUB_TOKEN used by sign_webhook in app/integrations/signing.py",
        "CI fails at app/services/payment.py:29 with KeyError 'id'",
    ],
    "ts_pkg": [
        "discount is applied twice at checkout",
        "formatMoney shows the wrong currency on the receipt",
    ],
    "go_svc": ["Reserve returns out of stock after restock"],
}
TASK_CASES = [
    pytest.param(name, task, id=f"{name}-{i}")
    for name, tasks in TASKS.items()
    for i, task in enumerate(tasks)
]


# -- verify script ---------------------------------------------------------------------------

VERIFY_CASES = [
    pytest.param("py_shop", "fix the refund webhook retry", 32_000, id="shop-default"),
    pytest.param("py_shop", "fix the refund webhook retry", 500, id="shop-fragments"),
    pytest.param("py_shop", "fix the refund webhook retry", 0, id="shop-empty"),
    pytest.param(
        "py_shop", "rotate GITHUB_TOKEN in app/integrations/signing.py", 2_000, id="shop-secrets"
    ),
    pytest.param("py_shop", "RefundService.refund double counts", 200_000, id="shop-large"),
    pytest.param("ts_pkg", "discount is applied twice at checkout", 32_000, id="ts-default"),
    pytest.param("ts_pkg", "export Cart and checkout from src/index.ts", 700, id="ts-no-eol"),
    pytest.param("go_svc", "Reserve returns out of stock after restock", 1_000, id="go-small"),
    pytest.param("go_svc", "restock notes in docs/notes.md", 32_000, id="go-crlf"),
]


@pytest.mark.parametrize(("name", "task", "budget"), VERIFY_CASES)
def test_verify_script_accepts_every_pack(
    repos: dict[str, Path], cache_dir: Path, tmp_path: Path, name: str, task: str, budget: int
) -> None:
    pack = pack_of(repos[name], task, cache_dir, budget)
    proc = run_verify(pack, repos[name], tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.strip().endswith(f"OK {len(pack['items'])} items verified")
    if budget >= 700:
        assert pack["items"], "a pack with room for excerpts should hold some"


def test_verify_script_accepts_the_cli_json_output(
    repos: dict[str, Path], cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = repos["py_shop"]
    code, out, _ = cli(
        capsys, "pack", "fix the refund webhook retry", "--repo", str(repo), "--format", "json"
    )
    assert code == 0
    proc = run_verify(out, repo, tmp_path)
    assert proc.returncode == 0, proc.stdout


def _first_multiline(pack: Doc) -> Doc:
    return next(i for i in pack["items"] if i["end_line"] > i["start_line"])


def _flip_char(pack: Doc, repo: Path) -> None:
    item = _first_multiline(pack)
    item["text"] = ("Y" if item["text"][0] == "X" else "X") + item["text"][1:]


def _alter_excerpt_sha(pack: Doc, repo: Path) -> None:
    item = _first_multiline(pack)
    item["excerpt_sha256"] = hashlib.sha256(b"not these lines").hexdigest()


def _alter_source_sha(pack: Doc, repo: Path) -> None:
    item = _first_multiline(pack)
    item["source_sha256"] = hashlib.sha256(b"another file").hexdigest()


def _shift_start(pack: Doc, repo: Path) -> None:
    _first_multiline(pack)["start_line"] += 1


def _bytes_off_by_one(pack: Doc, repo: Path) -> None:
    _first_multiline(pack)["bytes"] += 1


def _used_bytes(pack: Doc, repo: Path) -> None:
    pack["budget"]["used_bytes"] -= 1


def _pack_id(pack: Doc, repo: Path) -> None:
    digest = pack["pack_id"][len("sha256:") :]
    pack["pack_id"] = "sha256:" + digest[::-1]


def _outside_path(pack: Doc, repo: Path) -> None:
    # the same bytes outside the repository: only the containment check can tell
    item = _first_multiline(pack)
    (repo.parent / "outside.py").write_bytes((repo / item["path"]).read_bytes())
    item["path"] = "../outside.py"


def _edit_source(pack: Doc, repo: Path) -> None:
    target = repo / _first_multiline(pack)["path"]
    target.write_bytes(target.read_bytes() + b"# edited after packing\n")


ID_MISMATCH = "pack_id does not match"
CORRUPTIONS = [
    pytest.param(_flip_char, False, "text or bytes differ", id="text-one-char"),
    pytest.param(_flip_char, True, "text or bytes differ", id="text-one-char-id-recomputed"),
    pytest.param(_alter_excerpt_sha, False, "excerpt_sha256 differs", id="excerpt-sha256"),
    pytest.param(_alter_source_sha, False, "source_sha256 differs", id="source-sha256"),
    pytest.param(_shift_start, False, "excerpt_sha256 differs", id="start-line-shifted"),
    pytest.param(_shift_start, True, "excerpt_sha256 differs", id="start-line-id-recomputed"),
    pytest.param(_bytes_off_by_one, False, "text or bytes differ", id="bytes-off-by-one"),
    pytest.param(_used_bytes, False, "used_bytes", id="used-bytes"),
    pytest.param(_pack_id, False, None, id="pack-id"),
    pytest.param(_outside_path, False, "not a file inside", id="path-outside"),
    pytest.param(_outside_path, True, "not a file inside", id="path-outside-id-recomputed"),
    pytest.param(_edit_source, True, "source_sha256 differs", id="source-edited-after-packing"),
]


@pytest.mark.parametrize(("corrupt", "recompute_id", "expected"), CORRUPTIONS)
def test_verify_script_rejects_a_corrupted_pack(
    shop: Path,
    cache_dir: Path,
    tmp_path: Path,
    corrupt: Callable[[Doc, Path], None],
    recompute_id: bool,
    expected: str | None,
) -> None:
    pack = pack_of(shop, "fix the refund webhook retry", cache_dir)
    assert run_verify(pack, shop, tmp_path / "before").returncode == 0
    corrupt(pack, shop)
    if recompute_id:
        pack["pack_id"] = recomputed_pack_id(pack)
    proc = run_verify(pack, shop, tmp_path / "after")
    assert proc.returncode == 1, proc.stdout
    assert proc.stdout.strip().endswith("FAIL")
    # a field changed without recomputing the id breaks the id too; a recomputed id holds
    id_changed = corrupt is not _edit_source and not recompute_id
    assert (ID_MISMATCH in proc.stdout) is id_changed, proc.stdout
    if expected is not None:
        assert expected in proc.stdout, proc.stdout


# -- determinism -----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "task"), TASK_CASES)
def test_the_same_inputs_give_byte_identical_packs(
    repos: dict[str, Path],
    make_repo: Callable[..., Path],
    cache_dir: Path,
    tmp_path: Path,
    name: str,
    task: str,
) -> None:
    def dump(repo: Path, cache: Path) -> str:
        return json.dumps(pack_of(repo, task, cache, 3_000), sort_keys=True)

    first = dump(repos[name], cache_dir)
    assert dump(repos[name], cache_dir) == first  # warm cache
    assert dump(repos[name], tmp_path / "fresh-cache") == first  # cold cache
    # the same content at another absolute path: no absolute path leaks into the pack
    copy = make_repo(FIXTURES[name], name=f"elsewhere-{name}")
    assert dump(copy, tmp_path / "copy-cache") == first
    assert str(repos[name]) not in first and str(tmp_path) not in first


def test_cli_json_output_is_byte_identical_across_runs(
    repos: dict[str, Path],
    cache_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    argv = ["pack", "fix the refund webhook retry", "--repo", str(repos["py_shop"])]
    argv += ["--format", "json", "--budget", "1500"]
    outputs = [cli(capsys, *argv)[1], cli(capsys, *argv)[1]]
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(tmp_path / "other-cache"))
    outputs.append(cli(capsys, *argv)[1])
    assert outputs[0] == outputs[1] == outputs[2]
    assert json.loads(outputs[0])["items"]


# -- schema and identity ---------------------------------------------------------------------


@pytest.mark.parametrize(("name", "task"), TASK_CASES)
@pytest.mark.parametrize("budget", [300, 4000, 32_000], ids=lambda b: f"budget{b}")
def test_every_pack_validates_against_the_schema_and_its_id_recomputes(
    repos: dict[str, Path], cache_dir: Path, name: str, task: str, budget: int
) -> None:
    pack = delivered_of(repos[name], task, cache_dir, budget)
    Draft202012Validator(pack_schema()).validate(pack)
    assert pack["schema"] == "excerpt.pack/v1"
    assert pack["pack_id"] == recomputed_pack_id(pack)
    assert pack["task_sha256"] == hashlib.sha256(task.encode()).hexdigest()
    assert [i["rank"] for i in pack["items"]] == list(range(1, len(pack["items"]) + 1))
    for item in pack["items"]:
        source = (repos[name] / item["path"]).read_bytes()
        assert item["source_sha256"] == hashlib.sha256(source).hexdigest()
        assert item["excerpt_sha256"] == hashlib.sha256(item["text"].encode()).hexdigest()
        digest = item["source_sha256"][:16]
        assert (
            item["handle"] == f"{item['path']}#L{item['start_line']}-L{item['end_line']}@{digest}"
        )
    assert pack["graph"] is None
    assert pack["stats"]["discovery_truncated"] is False


def test_a_changed_task_changes_the_pack_id_and_task_hash_only(
    repos: dict[str, Path], cache_dir: Path
) -> None:
    one = pack_of(repos["go_svc"], "Reserve returns out of stock", cache_dir)
    two = pack_of(repos["go_svc"], "Reserve returns out of stock ", cache_dir)
    assert one["task_sha256"] != two["task_sha256"]
    assert one["pack_id"] != two["pack_id"]
    assert one["items"] == two["items"]


# -- budget truth ----------------------------------------------------------------------------


def _covered(entries: list[Doc], path: str, line: int) -> bool:
    return any(
        e["path"] == path and e.get("start_line", 0) <= line <= e.get("end_line", 0)
        for e in entries
    )


def _check_budget_truth(repo: Path, pack: Doc, plan: Doc, budget: int) -> None:
    items, omitted = pack["items"], pack["omitted"]
    assert pack["budget"]["bytes"] == budget
    assert pack["budget"]["used_bytes"] <= budget
    assert pack["budget"]["used_bytes"] == sum(i["bytes"] for i in items)
    for item in items:
        assert item["bytes"] == len(item["text"].encode("utf-8"))
        lines = file_lines(repo, item["path"])
        assert item["text"].encode() == b"".join(lines[item["start_line"] - 1 : item["end_line"]])
        assert item["truncated"] is (item["kind"] == "fragment")
    # excerpts of one file never overlap: overlapping regions merge
    spans: dict[str, list[tuple[int, int]]] = {}
    for item in items:
        spans.setdefault(item["path"], []).append((item["start_line"], item["end_line"]))
    for ranges in spans.values():
        ordered = sorted(ranges)
        assert all(a[1] < b[0] for a, b in itertools.pairwise(ordered)), ordered
    for entry in omitted:
        if entry["reason"] == "budget":
            assert "bytes_needed" in entry and "score" in entry, entry
            size = lines_bytes(repo, entry["path"], entry["start_line"], entry["end_line"])
            assert entry["bytes_needed"] == size, entry
    accounted = [
        o for o in omitted if o["reason"] in ("budget", "secret", "too_small", "duplicate")
    ]
    for cand in plan["candidates"]:
        for line in range(cand["start_line"], cand["end_line"] + 1):
            assert _covered(items, cand["path"], line) or _covered(accounted, cand["path"], line), (
                f"{cand['path']}:{line} ranked but neither packed nor listed as omitted"
            )


@pytest.mark.parametrize(
    "budget", [200, 500, 1000, 2000, 5000, 10000, 32000, 100000, 200000], ids=str
)
def test_budget_is_a_hard_truthful_limit_and_every_ranked_region_is_accounted_for(
    repos: dict[str, Path], cache_dir: Path, budget: int
) -> None:
    truncated = 0
    for name, tasks in TASKS.items():
        for task in tasks:
            pack = pack_of(repos[name], task, cache_dir, budget)
            plan = plan_of(repos[name], task, cache_dir)
            assert plan["candidates"], task
            _check_budget_truth(repos[name], pack, plan, budget)
            truncated += sum(i["truncated"] for i in pack["items"])
            if budget >= 100_000:  # room for everything: nothing left out for budget but
                # files below the confidence floor, which the pack says it stopped short of
                left = [o for o in pack["omitted"] if o["reason"] == "budget"]
                assert all("confidence" in o for o in left), task
                assert bool(left) == ("stopped_short" in pack["budget"]), task
    if budget <= 500:
        assert truncated, "a tight budget should cut at least one region into a fragment"


def test_budget_zero_gives_no_items_and_omits_everything(
    repos: dict[str, Path], cache_dir: Path
) -> None:
    for name, tasks in TASKS.items():
        for task in tasks:
            pack = pack_of(repos[name], task, cache_dir, 0)
            plan = plan_of(repos[name], task, cache_dir)
            assert pack["items"] == []
            assert pack["budget"] == {"bytes": 0, "used_bytes": 0}
            _check_budget_truth(repos[name], pack, plan, 0)
            assert {c["path"] for c in plan["candidates"]} <= {o["path"] for o in pack["omitted"]}


def test_plan_sizes_are_the_bytes_of_their_lines_less_secret_lines(
    repos: dict[str, Path], cache_dir: Path
) -> None:
    for name, tasks in TASKS.items():
        for task in tasks:
            plan = plan_of(repos[name], task, cache_dir)
            secret = {
                (o["path"], n)
                for o in plan["omitted"]
                if o["reason"] == "secret"
                for n in range(o["start_line"], o["end_line"] + 1)
            }
            for cand in plan["candidates"]:
                size = sum(
                    lines_bytes(repos[name], cand["path"], n, n)
                    for n in range(cand["start_line"], cand["end_line"] + 1)
                    if (cand["path"], n) not in secret
                )
                assert cand["bytes"] == size, cand


# -- pins ------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["absolute", "relative-to-cwd", "cli"])
def test_changed_paths_come_first(
    repos: dict[str, Path],
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    repo = repos["py_shop"]
    changed = ["app/settings.py", "tests/test_orders.py"]  # unrelated to the task's words
    task = "fix the refund webhook retry"
    if how == "absolute":
        pack = pack_of(repo, task, cache_dir, changed=tuple(str(repo / p) for p in changed))
    elif how == "relative-to-cwd":
        monkeypatch.chdir(repo)
        pack = pack_of(repo, task, cache_dir, changed=tuple(changed))
    else:
        monkeypatch.chdir(repo)
        code, out, _ = cli(
            capsys, "pack", task, "--repo", str(repo), "--format", "json",
            *(arg for path in changed for arg in ("--changed", path)),
        )  # fmt: skip
        assert code == 0
        pack = json.loads(out)
    assert sorted(i["path"] for i in pack["items"][:2]) == changed
    assert all("changed" in signals(i) for i in pack["items"][:2])
    assert {i["path"] for i in pack["items"] if "changed" in signals(i)} == set(changed)
    assert pack["items"][2]["path"] == "app/services/refund.py"  # then the best lexical match


@pytest.mark.parametrize("via", ["library", "cli"])
def test_changed_from_git_pins_edited_staged_and_untracked_files_first(
    shop: Path,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    via: str,
) -> None:
    settings = shop / "app/settings.py"
    settings.write_text(settings.read_text() + 'CURRENCY = "EUR"\n')  # edited, not staged
    webhooks = shop / "app/views/webhooks.py"
    webhooks.write_text(webhooks.read_text() + "\n\ndef ping() -> int:\n    return 200\n")
    git(shop, "add", "app/views/webhooks.py")  # staged
    (shop / "app/audit.py").write_text("def audit_log(event):\n    return event\n")  # untracked
    expected = ["app/audit.py", "app/settings.py", "app/views/webhooks.py"]
    task = "RefundService.refund double counts partial refunds"
    if via == "library":
        pack = pack_of(shop, task, cache_dir, changed_from_git=True)
    else:
        argv = ["pack", task, "--repo", str(shop), "--format", "json", "--changed-from-git"]
        code, out, _ = cli(capsys, *argv)
        assert code == 0
        pack = json.loads(out)
    assert sorted(i["path"] for i in pack["items"][:3]) == expected
    assert all("changed" in signals(i) for i in pack["items"][:3])
    later = {i["path"] for i in pack["items"][3:] if "changed" in signals(i)}
    assert later <= set(expected)  # nothing unchanged is reported as changed
    assert pack["items"][3]["path"] == "app/services/refund.py"


def test_no_changes_in_git_pins_nothing(repos: dict[str, Path], cache_dir: Path) -> None:
    pack = pack_of(
        repos["py_shop"], "fix the refund webhook retry", cache_dir, changed_from_git=True
    )
    assert not [i for i in pack["items"] if "changed" in signals(i)]
    assert pack["items"][0]["path"] == "app/services/refund.py"


def _traceback(root: Path) -> tuple[str, int]:
    line = line_of(REFUND_PY, "provider_id = self.gateway.refund(")
    task = (
        "Refunds crash in production:\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.11/site-packages/gunicorn/workers/sync.py", line 135, in run\n'
        f'  File "{root}/app/services/refund.py", line {line}, in refund\n'
        "    provider_id = self.gateway.refund(order.payment_id, amount_cents)\n"
        "KeyError: 'id'\n"
    )
    return task, line


FRAME_CASES = [
    pytest.param(
        "ts_pkg",
        "TypeError: Cannot read properties of undefined (reading 'toFixed')\n"
        "    at formatMoney (src/utils/currency.ts:{line}:22)\n"
        "    at checkout (src/checkout.ts:11:47)",
        "src/utils/currency.ts",
        line_of(TS_CURRENCY, "toFixed"),
        id="node-stack",
    ),
    pytest.param(
        "py_shop",
        "mypy: app/services/payment.py:{line}: error: Value of type dict is not indexable",
        "app/services/payment.py",
        line_of(PAYMENT_PY, '"/refunds"'),
        id="path-colon-line",
    ),
    pytest.param(
        "go_svc",
        "panic: assignment to entry in nil map\n\ngoroutine 7 [running]:\n"
        "example.com/inventory/stock.(*Store).Restock(...)\n"
        "\t/home/ci/work/inventory/stock/store.go:{line} +0x1d",
        "stock/store.go",
        line_of(GO_STOCK, "s.levels[sku] += quantity"),
        id="go-panic",
    ),
]


def test_a_python_traceback_pins_its_file_first_at_the_frame_line(
    repos: dict[str, Path], cache_dir: Path
) -> None:
    task, line = _traceback(repos["py_shop"])
    pack = pack_of(repos["py_shop"], task, cache_dir)
    first = pack["items"][0]
    assert first["path"] == "app/services/refund.py"
    assert first["start_line"] <= line <= first["end_line"]
    assert "stack_frame" in signals(first)


@pytest.mark.parametrize(("name", "template", "path", "line"), FRAME_CASES)
def test_a_file_line_reference_pins_its_file_first_at_that_line(
    repos: dict[str, Path], cache_dir: Path, name: str, template: str, path: str, line: int
) -> None:
    pack = pack_of(repos[name], template.format(line=line), cache_dir)
    first = pack["items"][0]
    assert first["path"] == path
    assert first["start_line"] <= line <= first["end_line"]
    assert "stack_frame" in signals(first)


def test_a_frame_pin_survives_a_tight_budget_as_a_fragment_holding_the_line(
    repos: dict[str, Path], cache_dir: Path
) -> None:
    task, line = _traceback(repos["py_shop"])
    pack = pack_of(repos["py_shop"], task, cache_dir, 120)
    assert pack["items"][0]["path"] == "app/services/refund.py"
    holding = [
        i
        for i in pack["items"]
        if i["path"] == "app/services/refund.py" and i["start_line"] <= line <= i["end_line"]
    ]
    assert [(i["kind"], i["truncated"]) for i in holding] == [("fragment", True)]


def test_every_in_repo_frame_of_a_traceback_is_pinned_before_other_files(
    repos: dict[str, Path], cache_dir: Path
) -> None:
    root = repos["py_shop"]
    view_line = line_of(ORDERS_VIEW_PY, "refund = service.refund(")
    task, refund_line = _traceback(root)
    task = task.replace(
        '  File "/usr/lib',
        f'  File "{root}/app/views/orders.py", line {view_line}, in refund_order\n  File "/usr/lib',
    )
    items = pack_of(root, task, cache_dir)["items"]
    pinned = {"app/views/orders.py": view_line, "app/services/refund.py": refund_line}
    assert {i["path"] for i in items[:2]} == set(pinned)
    for path, line in pinned.items():
        item = items[first_index(items, path)]
        assert item["start_line"] <= line <= item["end_line"], item


STRONG_MATCH = "RefundService.refund and RefundService.retry_refund_webhook retry forever"
OUTRANKING_PINS = [
    pytest.param(
        f"{STRONG_MATCH} since the change in app/settings.py",
        "app/settings.py",
        None,
        id="named-path",
    ),
    pytest.param(
        f'{STRONG_MATCH}\n  File "{{root}}/app/services/notifications.py", line 12, in <module>',
        "app/services/notifications.py",
        12,
        id="traceback-frame",
    ),
]


@pytest.mark.parametrize(("template", "path", "line"), OUTRANKING_PINS)
def test_a_pin_outranks_a_stronger_lexical_and_symbol_match(
    repos: dict[str, Path], cache_dir: Path, template: str, path: str, line: int | None
) -> None:
    # the task names RefundService's methods loudly; the pinned file barely matches its words
    root = repos["py_shop"]
    items = pack_of(root, template.format(root=root), cache_dir)["items"]
    assert items[0]["path"] == path
    # the loud match comes right after the pin in the ranking (excerpts are read by their
    # chance of holding a line to change, so its excerpt need not be the second)
    ranked = sorted({i["path"]: i["file_rank"] for i in items}.items(), key=lambda pr: pr[1])
    assert [p for p, _ in ranked[:2]] == [path, "app/services/refund.py"]
    assert {"path", "stack_frame"} & set(signals(items[0]))
    if line is not None:
        assert items[0]["start_line"] <= line <= items[0]["end_line"]


NAMED_PATHS = [
    pytest.param("py_shop", "add a currency field to app/models.py", "app/models.py", id="py"),
    pytest.param(
        "ts_pkg",
        "support stacked discounts in src/pricing/discount.ts",
        "src/pricing/discount.ts",
        id="ts",
    ),
    pytest.param("go_svc", "log every reservation made in main.go", "main.go", id="go-root"),
]


@pytest.mark.parametrize(("name", "task", "path"), NAMED_PATHS)
def test_a_file_named_in_the_task_is_pinned_first(
    repos: dict[str, Path], cache_dir: Path, name: str, task: str, path: str
) -> None:
    first = pack_of(repos[name], task, cache_dir)["items"][0]
    assert first["path"] == path
    assert "path" in signals(first)


def _span(text: str, start: str, end: str) -> tuple[int, int]:
    first = line_of(text, start)
    return first, line_of(text, end, after=first)


NAMED_SYMBOLS = [
    pytest.param(
        "py_shop",
        "RefundService.refund double counts partial refunds",
        "app/services/refund.py",
        _span(REFUND_PY, "    def refund(", "        return refund"),
        id="py-method",
    ),
    pytest.param(
        "ts_pkg",
        "applyDiscount lets a fixed discount exceed the total",
        "src/pricing/discount.ts",
        _span(TS_DISCOUNT, "export function applyDiscount", "}"),
        id="ts-function",
    ),
    pytest.param(
        "go_svc",
        "Store.Restock should reject negative quantities",
        "stock/store.go",
        _span(GO_STOCK, "func (s *Store) Restock", "}"),
        id="go-method",
    ),
]


@pytest.mark.parametrize(("name", "task", "path", "span"), NAMED_SYMBOLS)
def test_a_named_symbol_gives_its_definition_lines(
    repos: dict[str, Path],
    cache_dir: Path,
    name: str,
    task: str,
    path: str,
    span: tuple[int, int],
) -> None:
    items = pack_of(repos[name], task, cache_dir)["items"]
    assert items[0]["path"] == path
    assert "defines" in signals(items[0])
    holding = [
        i
        for i in items
        if i["path"] == path and i["start_line"] <= span[0] and span[1] <= i["end_line"]
    ]
    assert holding, f"no excerpt of {path} holds lines {span}"
    lines = file_lines(repos[name], path)
    definition = b"".join(lines[span[0] - 1 : span[1]]).decode()
    assert definition in holding[0]["text"]


# -- secrets ---------------------------------------------------------------------------------

FORBIDDEN = [KEY_BEGIN, KEY_END, *KEY_BODY, GH_TOKEN, ENV_CANARY, LOOSE_KEY_BEGIN, *LOOSE_KEY_BODY]
SECRET_TASKS = [
    pytest.param("rotate the GITHUB_TOKEN in app/integrations/signing.py", id="names-key-file"),
    pytest.param("WEBHOOK_SIGNING_KEY BEGIN RSA PRIVATE KEY leaked, rotate it", id="key-words"),
    pytest.param("DEPLOY_BOT_LOGIN GITHUB_TOKEN ghp_ token for the deploy bot", id="token-words"),
    pytest.param(f"signing key line {KEY_BODY[2][:20]} looks wrong", id="key-body-words"),
    pytest.param("sign_webhook verify_webhook_signature hmac digest", id="neighbours"),
    pytest.param("the PAYMENT_API_KEY in .env and config/.env.production", id="names-env"),
    pytest.param(
        'File "app/integrations/signing.py", line 12, in <module>\nValueError: bad key',
        id="frame-inside-key",
    ),
    pytest.param("app/integrations/signing.py:7: token rejected", id="ref-on-token-line"),
    pytest.param("docs/key-rotation.md: rotate the old deploy key yearly", id="loose-key-doc"),
    pytest.param(f"old deploy key {LOOSE_KEY_BODY[1][:24]} in the docs", id="loose-key-body"),
]


@pytest.mark.parametrize("task", SECRET_TASKS)
@pytest.mark.reliability("B3.25")
def test_secrets_never_appear_in_items_json_or_markdown(
    repos: dict[str, Path], cache_dir: Path, capsys: pytest.CaptureFixture[str], task: str
) -> None:
    repo = repos["py_shop"]
    outputs = []
    for budget in (40, 120, 400, 1_500, 32_000):
        pack = pack_of(repo, task, cache_dir, budget)
        for item in pack["items"]:
            assert not [s for s in FORBIDDEN if s in item["text"]], (item["path"], budget)
        outputs.append(json.dumps(pack, ensure_ascii=False))
    for fmt in ("json", "md"):
        code, out, err = cli(capsys, "pack", task, "--repo", str(repo), "--format", fmt)
        assert code == 0, err
        outputs += [out, err]
    code, out, _ = cli(capsys, "plan", task, "--repo", str(repo), "--json")
    outputs.append(out)
    for text in outputs:
        assert not [s for s in FORBIDDEN if s in text]
    # the key file was read and served around its secrets, not skipped wholesale
    served = json.loads(outputs[4])
    if any(i["path"] == "app/integrations/signing.py" for i in served["items"]):
        assert any(o["reason"] == "secret" for o in served["omitted"])


KEY_FILE = "app/integrations/signing.py"
SECRET_SPANS = [
    pytest.param(
        f"rotate the GITHUB_TOKEN and signing key in {KEY_FILE}\n"
        f'  File "{KEY_FILE}", line {line_of(SIGNING_PY, KEY_BODY[1])}, in <module>',
        KEY_FILE,
        [
            (line_of(SIGNING_PY, GH_TOKEN),) * 2,
            (line_of(SIGNING_PY, KEY_BEGIN), line_of(SIGNING_PY, KEY_END)),
        ],
        id="token-and-key-block",
    ),
    pytest.param(
        "docs/key-rotation.md: rotate the old deploy key",
        "docs/key-rotation.md",
        [(5, 8)],  # an unterminated block runs to the end of the file
        id="unterminated-key-block",
    ),
]


@pytest.mark.parametrize(("task", "path", "spans"), SECRET_SPANS)
def test_secret_lines_are_listed_as_omitted_with_their_line_ranges(
    repos: dict[str, Path], cache_dir: Path, task: str, path: str, spans: list[tuple[int, int]]
) -> None:
    pack = pack_of(repos["py_shop"], task, cache_dir)
    listed = [o for o in pack["omitted"] if o["reason"] == "secret" and o["path"] == path]
    assert sorted((o["start_line"], o["end_line"]) for o in listed) == spans
    for entry in listed:
        assert set(entry) == {"path", "reason", "start_line", "end_line"}
    served = [i for i in pack["items"] if i["path"] == path]
    assert served and pack["items"][0]["path"] == path
    secret_lines = {n for lo, hi in spans for n in range(lo, hi + 1)}
    covered = {n for i in served for n in range(i["start_line"], i["end_line"] + 1)}
    assert not secret_lines & covered
    # the excerpt is split around the secret, not dropped: the line before it is served,
    # or listed as too small when only a sliver of one or two lines is left there
    small = {
        n
        for o in pack["omitted"]
        if o["reason"] == "too_small" and o["path"] == path
        for n in range(o["start_line"], o["end_line"] + 1)
    }
    assert {lo - 1 for lo, _ in spans} <= covered | small
    assert covered - secret_lines


def test_a_named_file_whose_best_region_is_a_secret_line_is_still_served_first(
    make_repo: Callable[..., Path], cache_dir: Path
) -> None:
    files = {
        "app/signing.py": f"import os\n\nGITHUB_TOKEN = '{GH_TOKEN}'\n\n\n"
        "def rotate_token():\n    return os.environ.get('NEW_TOKEN')\n",
        "app/github.py": "def github_client(token):\n    return {'token': token}\n",
    }
    for name in ("orders", "payments", "users", "emails", "search", "reports"):
        files[f"app/{name}.py"] = f"def list_{name}(db):\n    return db.query('{name}')\n"
    repo = make_repo(files, name="mini")
    task = "rotate the GITHUB_TOKEN in app/signing.py"
    assert plan_of(repo, task, cache_dir)["candidates"][0]["path"] == "app/signing.py"
    pack = pack_of(repo, task, cache_dir)
    assert {"path": "app/signing.py", "reason": "secret", "start_line": 3, "end_line": 3} in pack[
        "omitted"
    ]
    assert any(i["path"] == "app/signing.py" for i in pack["items"])  # rotate_token is served
    assert pack["items"][0]["path"] == "app/signing.py"


def test_a_secret_written_between_two_packs_of_one_process_is_withheld_from_the_second(
    make_repo: Callable[..., Path], cache_dir: Path
) -> None:
    # a long-lived process remembers each file version's secret lines: the new version is
    # scanned anew, never served under the old version's verdict
    files = {
        "app/signing.py": "import os\n\n\ndef rotate_token():\n    return os.environ.get('T')\n",
        "app/github.py": "def github_client(token):\n    return {'token': token}\n",
    }
    repo = make_repo(files, name="mini")
    task = "rotate_token in app/signing.py"
    first = pack_of(repo, task, cache_dir)
    assert not [o for o in first["omitted"] if o["reason"] == "secret"]
    (repo / "app/signing.py").write_text(
        f"import os\n\nGITHUB_TOKEN = '{GH_TOKEN}'\n\ndef rotate_token():\n"
        "    return os.environ.get('T')\n"
    )
    second = pack_of(repo, task, cache_dir)
    assert {"path": "app/signing.py", "reason": "secret", "start_line": 3, "end_line": 3} in (
        second["omitted"]
    )
    assert GH_TOKEN not in json.dumps(second)


def _pem(kind: str, seed: int) -> str:
    rng = random.Random(seed)
    body = "\n".join(
        base64.b64encode(bytes(rng.randrange(256) for _ in range(48))).decode() for _ in range(8)
    )
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"


@pytest.mark.parametrize("path", ["src/signer_keys.py", "tests/test_keys.py"])
def test_a_named_file_of_keys_serves_its_other_lines_and_lists_the_key_lines_as_secret(
    make_repo: Callable[..., Path], cache_dir: Path, path: str
) -> None:
    # every key block is a secret; what is left of the file is one or two lines at a time,
    # and the task names the file: those lines are served, the key lines listed as withheld
    rsa, ec = _pem("RSA PRIVATE KEY", 1), _pem("EC PRIVATE KEY", 2)
    ssh = base64.b64encode(random.Random(3).randbytes(180)).decode()
    text = (
        "# Keys for the signature verifier's tests.\n"
        f'RSA_KEY = """{rsa}"""\n'
        f'EC_KEY = """{ec}"""\n'
        f'ED25519 = "-----BEGIN OPENSSH PRIVATE KEY-----\\n{ssh}\\n'
        '-----END OPENSSH PRIVATE KEY-----\\n"\n'
        "ALL_KEYS = [RSA_KEY, EC_KEY, ED25519]\n"
    )
    repo = make_repo({path: text, "src/verify.py": "def verify(sig):\n    return sig\n"})
    pack = pack_of(repo, f"ALL_KEYS in {path} is missing the ed25519 key", cache_dir)
    served = [i for i in pack["items"] if i["path"] == path]
    lines = "".join(i["text"] for i in served)
    assert "# Keys for the signature verifier's tests.\n" in lines
    assert "ALL_KEYS = [RSA_KEY, EC_KEY, ED25519]\n" in lines
    withheld = {
        n
        for o in pack["omitted"]
        if o["path"] == path and o["reason"] == "secret"
        for n in range(o["start_line"], o["end_line"] + 1)
    }
    key_lines = {n for n, line in enumerate(text.splitlines(), 1) if "KEY" in line[:12]}
    assert key_lines - {text.count("\n")} <= withheld
    assert "PRIVATE KEY" not in lines and ssh[:40] not in json.dumps(pack)


def test_a_named_sensitive_path_is_listed_by_name_only(
    repos: dict[str, Path], cache_dir: Path
) -> None:
    pack = pack_of(
        repos["py_shop"], "PAYMENT_API_KEY in config/.env.production is stale", cache_dir
    )
    entries = [o for o in pack["omitted"] if o["path"] == "config/.env.production"]
    assert entries == [{"path": "config/.env.production", "reason": "sensitive"}]
    assert not [i for i in pack["items"] if ".env" in i["path"]]


@pytest.mark.parametrize(
    ("name", "task", "path"),
    [
        pytest.param("py_shop", "the PAYMENT_API_KEY in .env is wrong", ".env", id="dotenv"),
        pytest.param("ts_pkg", "API_TOKEN in .env.local expired", ".env.local", id="dotenv-local"),
    ],
)
def test_a_named_root_dotenv_is_listed_as_sensitive(
    repos: dict[str, Path], cache_dir: Path, name: str, task: str, path: str
) -> None:
    pack = pack_of(repos[name], task, cache_dir)
    assert {"path": path, "reason": "sensitive"} in pack["omitted"]


# -- demotion --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "task",
    [
        pytest.param("refund exceeds the captured amount", id="error-message"),
        pytest.param("Your refund has been issued message is wrong", id="email-template"),
        pytest.param("refund webhook retry", id="feature-words"),
    ],
)
def test_a_matching_translation_catalog_ranks_below_the_matching_source(
    repos: dict[str, Path], cache_dir: Path, task: str
) -> None:
    po, source = "locale/fr/LC_MESSAGES/django.po", "app/services/refund.py"
    plan = plan_of(repos["py_shop"], task, cache_dir)["candidates"]
    paths = [c["path"] for c in plan]
    assert po in paths, "the catalog matches the task and should still be ranked"
    assert paths.index(source) < paths.index(po)
    demoted = plan[paths.index(po)]
    assert {"signal": "demoted", "detail": "translation catalog"} in demoted["reasons"]
    assert demoted["score"] < plan[paths.index(source)]["score"]
    pack = pack_of(repos["py_shop"], task, cache_dir)
    items = pack["items"]
    if any(i["path"] == po for i in items):
        assert first_index(items, source) < first_index(items, po)
    else:  # or left out, below the confidence a pack serves without filling
        assert any(o["path"] == po and "confidence" in o for o in pack["omitted"])
        assert any(i["path"] == source for i in items)


# -- Markdown rendering ----------------------------------------------------------------------


def _check_markdown(md: str, pack: Doc) -> None:
    """Items in the pack's order, each run of one file's items under a header: the file's
    first with its number, path and reason codes, a later one (the reading came back to the
    file) with the same number and ``again``; each item a handle + kind line, then a fenced
    block holding the exact text."""
    cursor = 0
    number = {p: n for n, p in enumerate(dict.fromkeys(i["path"] for i in pack["items"]), 1)}
    previous = None
    seen: set[str] = set()
    for item in pack["items"]:
        path = item["path"]
        if path != previous:
            header = f"\n## {number[path]}. `{path}`" + (", again\n" if path in seen else "")
            cursor = md.index(header, cursor)
            seen.add(path)
            previous = path
        at = md.index(f"\n`{item['handle']}` {item['kind']}", cursor) + 1
        lines = md[at:].split("\n", 2)
        opening = lines[1]
        fence = opening[: len(opening) - len(opening.lstrip("`"))]
        longest = max((len(run) for run in re.findall(r"`+", item["text"])), default=0)
        assert len(fence) >= 3 and len(fence) > longest, (fence, longest)
        suffix = Path(item["path"]).suffix
        assert opening[len(fence) :] == FENCE_LANG.get(suffix, opening[len(fence) :])
        body_start = at + len(lines[0]) + 1 + len(opening) + 1
        body_end = md.index("\n" + fence + "\n", body_start - 1) + 1
        expected = item["text"] if item["text"].endswith("\n") else item["text"] + "\n"
        assert md[body_start:body_end] == expected, item["path"]
        cursor = body_end


MD_CASES = [
    pytest.param("py_shop", "fix the refund webhook retry", id="python"),
    pytest.param("ts_pkg", "export Cart and checkout from src/index.ts", id="ts-no-final-eol"),
    pytest.param("go_svc", "reserve then restock, see docs/notes.md", id="go-crlf"),
]


@pytest.mark.parametrize(("name", "task"), MD_CASES)
def test_markdown_shows_each_item_with_header_handle_reasons_and_exact_fenced_text(
    repos: dict[str, Path],
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    task: str,
) -> None:
    repo = repos[name]
    code, out, _ = cli(capsys, "pack", task, "--repo", str(repo), "--format", "json")
    assert code == 0
    pack = json.loads(out)
    code, md, _ = cli(capsys, "pack", task, "--repo", str(repo), "--format", "md")
    assert code == 0
    assert md.startswith(f"# Context pack: {len(pack['items'])} excerpts from ")
    size, tokens = len(md.encode()), o200k_count(md)
    assert pack["budget"]["rendered_bytes"] == size <= pack["budget"]["bytes"]
    assert pack["budget"]["tokens"] == {"o200k": tokens}
    assert f"this text {size:,} bytes, {tokens:,} o200k tokens." in md
    assert pack["items"]
    _check_markdown(md, pack)
    if name != "py_shop":  # the odd line endings are served byte-exact
        odd = [i for i in pack["items"] if i["path"] in ("src/index.ts", "docs/notes.md")]
        assert odd and all(i["text"] in md for i in odd)


@pytest.mark.reliability("B5.40")
def test_text_holding_a_backtick_fence_gets_a_longer_fence(
    repos: dict[str, Path], cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, task = repos["ts_pkg"], "receiptMarkdown renders the receipt total"
    code, out, _ = cli(capsys, "pack", task, "--repo", str(repo), "--format", "json")
    pack = json.loads(out)
    fenced = [i for i in pack["items"] if "```" in i["text"]]
    assert fenced and fenced[0]["path"] == "src/receipt.ts"
    code, md, _ = cli(capsys, "pack", task, "--repo", str(repo), "--format", "md")
    assert code == 0
    assert "\n````typescript\n" in md
    _check_markdown(md, pack)


# -- graph -----------------------------------------------------------------------------------


def _export(capsys: pytest.CaptureFixture[str], repo: Path, target: Path) -> Doc:
    code, out, err = cli(capsys, "graph", "export", "--repo", str(repo), "-o", str(target))
    assert code == 0, err
    assert out == ""
    return dict(json.loads(target.read_text(encoding="utf-8")))


def test_graph_export_carries_a_digest_of_its_canonical_content(
    repos: dict[str, Path], cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = repos["py_shop"]
    doc = _export(capsys, repo, tmp_path / "graph.json")
    body = {k: v for k, v in doc.items() if k != "sha256"}
    assert doc["sha256"] == hashlib.sha256(canonical(body)).hexdigest()
    assert doc["schema"] == "excerpt.graph/v1"
    edge = {"src": "app/services/refund.py", "dst": "app/models.py", "kind": "imports"}
    assert edge in doc["edges"]
    assert "app/services/refund.py" in doc["nodes"] and ".env" not in doc["nodes"]
    code, out, _ = cli(capsys, "graph", "export", "--repo", str(repo))
    assert code == 0 and json.loads(out) == doc
    assert export_graph(repo, cache_dir=tmp_path / "other") == doc


def test_pack_with_a_graph_file_reports_integrity_valid_freshness_unverified(
    repos: dict[str, Path], cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = repos["py_shop"]
    target = tmp_path / "graph.json"
    doc = _export(capsys, repo, target)
    argv = ["pack", "fix the refund webhook retry", "--repo", str(repo), "--graph", str(target)]
    code, out, err = cli(capsys, *argv, "--format", "json")
    assert code == 0, err
    pack = json.loads(out)
    assert pack["graph"] == {
        "source": "file",
        "integrity": "valid",
        "note": "integrity valid, freshness unverified",
        "sha256": doc["sha256"],
    }
    Draft202012Validator(pack_schema()).validate(pack)
    assert pack["pack_id"] == recomputed_pack_id(pack)
    code, md, _ = cli(capsys, *argv, "--format", "md")
    assert "integrity valid, freshness unverified" in md and doc["sha256"] in md


def _alter_edge(doc: Doc) -> None:
    doc["edges"][0]["dst"] = "app/settings.py"


def _alter_kind(doc: Doc) -> None:
    doc["edges"][0]["kind"] = "tests" if doc["edges"][0]["kind"] == "imports" else "imports"


def _drop_edge(doc: Doc) -> None:
    doc["edges"].pop()


def _drop_digest(doc: Doc) -> None:
    del doc["sha256"]


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(_alter_edge, id="edge-dst-altered"),
        pytest.param(_alter_kind, id="edge-kind-altered"),
        pytest.param(_drop_edge, id="edge-removed"),
        pytest.param(_drop_digest, id="digest-removed"),
    ],
)
def test_a_tampered_graph_file_is_refused(
    repos: dict[str, Path],
    cache_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    tamper: Callable[[Doc], None],
) -> None:
    repo = repos["py_shop"]
    target = tmp_path / "graph.json"
    doc = _export(capsys, repo, target)
    tamper(doc)
    target.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    argv = ["pack", "fix the refund webhook retry", "--repo", str(repo), "--graph", str(target)]
    code, out, err = cli(capsys, *argv, "--format", "json")
    assert code == 2
    # under --format json the error is one JSON line on stdout, and the same on stderr
    assert err == out and out.count("\n") == 1 and "Traceback" not in err
    doc = json.loads(out)
    assert (doc["code"], doc["exit"]) == ("usage_error", 2) and "graph" in doc["error"]


# -- usage errors and task sources -----------------------------------------------------------

USAGE_ERRORS = [
    pytest.param([], id="no-task"),
    pytest.param([""], id="empty-task"),
    pytest.param([" \n\t "], id="blank-task"),
    pytest.param(["fix it", "--task-file", "{task_file}"], id="task-and-task-file"),
    pytest.param(["fix it", "--budget", "-1"], id="negative-budget"),
    pytest.param(["fix it", "--changed", "{outside}"], id="changed-outside-repo"),
    pytest.param(
        ["fix it", "--changed", "app/models.py", "--changed", "../elsewhere.py"],
        id="changed-dotdot",
    ),
    pytest.param(["--task-file", "{missing}"], id="missing-task-file"),
    pytest.param(["--task-file", "{empty_file}"], id="empty-task-file"),
    pytest.param(["fix it", "--graph", "{missing}"], id="missing-graph-file"),
]


@pytest.mark.parametrize("command", ["pack", "plan"])
@pytest.mark.parametrize("extra", USAGE_ERRORS)
def test_usage_errors_exit_2_with_one_line_and_no_traceback(
    repos: dict[str, Path],
    cache_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    extra: list[str],
) -> None:
    repo = repos["py_shop"]
    monkeypatch.chdir(repo)
    (tmp_path / "task.txt").write_text("fix the refund\n", encoding="utf-8")
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    (tmp_path / "outside.py").write_text("x = 1\n", encoding="utf-8")
    names = {
        "task_file": str(tmp_path / "task.txt"),
        "empty_file": str(tmp_path / "empty.txt"),
        "missing": str(tmp_path / "missing.txt"),
        "outside": str(tmp_path / "outside.py"),
    }
    argv = [command, *(a.format(**names) for a in extra), "--repo", str(repo), "--format", "json"]
    code, out, err = cli(capsys, *argv)
    assert code == 2, err
    # under --format json the error is one JSON line on stdout, and the same on stderr
    assert err == out and out.count("\n") == 1, err
    assert json.loads(out)["code"] == "usage_error"
    assert "Traceback" not in err


def test_the_task_from_an_argument_a_file_or_stdin_gives_the_same_pack(
    repos: dict[str, Path],
    cache_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo, task = repos["py_shop"], "fix the refund webhook retry"
    common = ["--repo", str(repo), "--format", "json", "--budget", "2000"]
    outputs = [cli(capsys, "pack", task, *common)[1]]
    task_file = tmp_path / "task.md"
    task_file.write_bytes(task.encode())
    outputs.append(cli(capsys, "pack", "--task-file", str(task_file), *common)[1])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(task.encode())))
    outputs.append(cli(capsys, "pack", "-", *common)[1])
    assert outputs[0] == outputs[1] == outputs[2]
    assert json.loads(outputs[0])["task_sha256"] == hashlib.sha256(task.encode()).hexdigest()


# -- plan ------------------------------------------------------------------------------------


def _keys(obj: Any) -> set[str]:
    if isinstance(obj, dict):
        return set(obj) | {k for v in obj.values() for k in _keys(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in _keys(v)}
    return set()


@pytest.mark.parametrize(("name", "task"), TASK_CASES)
def test_plan_json_lists_ranked_regions_with_reasons_and_sizes_but_no_text(
    repos: dict[str, Path],
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    task: str,
) -> None:
    code, out, _ = cli(capsys, "plan", task, "--repo", str(repos[name]), "--json")
    assert code == 0
    plan = json.loads(out)
    assert set(plan) == {"schema", "candidates", "suggested_budget", "omitted"}
    assert plan["schema"] == "excerpt.plan/v1"
    assert plan["candidates"]
    keys = {"rank", "path", "start_line", "end_line", "score", "reasons", "bytes"}
    keys |= {"role", "confidence"}
    for rank, cand in enumerate(plan["candidates"], start=1):
        assert set(cand) - {"related_to"} == keys
        assert cand["rank"] == rank and 1 <= cand["start_line"] <= cand["end_line"]
        assert cand["reasons"] and all(set(r) == {"signal", "detail"} for r in cand["reasons"])
    assert "text" not in _keys(plan)
    assert isinstance(plan["suggested_budget"], int) and plan["suggested_budget"] >= 1000
    assert plan == plan_of(repos[name], task, cache_dir)
    # every file the pack serves was in the plan
    pack = pack_of(repos[name], task, cache_dir)
    assert {i["path"] for i in pack["items"]} <= {c["path"] for c in plan["candidates"]}


# -- write audit -----------------------------------------------------------------------------


@pytest.mark.reliability("B6.43", cases=4)
def test_plan_pack_get_and_graph_export_never_write_inside_the_repository(
    shop: Path, cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (shop / "app/settings.py").write_text(SETTINGS_PY + "# dirty\n")  # a dirty tree too
    before = tree_snapshot(shop)
    assert any(p.startswith(".git/") or p.startswith(".git\\") for p in before)
    task = "fix the refund webhook retry"
    base = ["--repo", str(shop)]
    assert cli(capsys, "plan", task, *base, "--json")[0] == 0
    assert cli(capsys, "plan", task, *base)[0] == 0
    code, out, _ = cli(capsys, "pack", task, *base, "--format", "json", "--changed-from-git")
    assert code == 0
    handles = [i["handle"] for i in json.loads(out)["items"]]
    assert cli(capsys, "pack", task, *base, "--format", "md", "--budget", "300")[0] == 0
    code, out, _ = cli(capsys, "get", *handles[:3], *base, "--json")
    assert code == 0 and [r["status"] for r in json.loads(out)] == ["fresh"] * len(handles[:3])
    graph = tmp_path / "graph.json"
    assert cli(capsys, "graph", "export", *base, "-o", str(graph))[0] == 0
    assert cli(capsys, "graph", "export", *base)[0] == 0
    assert cli(capsys, "pack", task, *base, "--graph", str(graph), "--format", "json")[0] == 0
    pack_of(shop, task, cache_dir, 1000)
    plan_of(shop, task, cache_dir)
    export_graph(shop, cache_dir=cache_dir)
    assert tree_snapshot(shop) == before
