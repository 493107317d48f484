"""The three realistic repositories the pack tests write, and the tasks they are packed for.

A small Python web shop (services, models, views, tests, a French translation catalog, a
``.env`` canary, a module with a planted RSA private key block and a GitHub token, and a doc
holding a cut-off private key), a TypeScript package, and a small Go service. The secrets are
generated from a fixed seed, so that no scanner finds a token in this file and every run
plants the same ones. ``conftest`` writes them (the ``repos`` and ``py_shop`` fixtures).
"""

from __future__ import annotations

import random
import string

import pytest

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
