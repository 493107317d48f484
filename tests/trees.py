"""The small shop the CLI, MCP, watcher, documentation, setup and real-client tests write.

``DOCUMENTED_SHOP`` is the example repository of the documentation: the transcripts of
``docs/*.md`` (``test_doc_examples``) pin its bytes (handles, and the counts of files, symbols
and edges), so it changes only with them. ``SHOP`` is that shop and what the other tests need
beside it: a module no refund task is about (``app/shipping.py``), for pins and edits that
must not ride on relevance, a project file and a CODEOWNERS file. ``TASK`` is the task they
ask of it; ``EXPECTED_FILE`` ranks first for it.
"""

from __future__ import annotations

__all__ = ["DOCUMENTED_SHOP", "EXPECTED_FILE", "SHOP", "TASK"]

DOCUMENTED_SHOP: dict[str, str] = {
    "app/__init__.py": "",
    "app/refunds.py": (
        '"""Refunds of orders."""\n\n'
        "from app.ledger import post\n\n\n"
        "class RefundService:\n"
        '    """Refunds part or all of an order."""\n\n'
        "    def refund(self, order, amount):\n"
        "        if amount > order.total:\n"
        '            raise ValueError("refund larger than the order")\n'
        "        return post(order, -amount)\n"
    ),
    "app/ledger.py": "def post(order, amount):\n    return (order.id, amount)\n",
    "tests/test_refunds.py": (
        "from app.refunds import RefundService\n\n\n"
        "def test_refund_is_posted():\n    assert RefundService\n"
    ),
    "README.md": "# Shop\n\nRefunds and a ledger.\n",
}

SHOP: dict[str, str] = {
    **DOCUMENTED_SHOP,
    "app/shipping.py": "def ship(order_id: str) -> str:\n    return f'shipped {order_id}'\n",
    "pyproject.toml": "[project]\nname = 'shop'\n",
    ".github/CODEOWNERS": "* @shop/maintainers\napp/ @shop/payments\n",
}

TASK = "RefundService.refund returns the wrong amount for partial refunds"
EXPECTED_FILE = "app/refunds.py"
