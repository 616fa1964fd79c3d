# ruff: noqa: E501 - traces are printed as the runtimes print them, long lines included
"""Stack traces of the runtimes other than Python, exactly as each runtime prints them.

Each function returns (exception type, message, printed trace) for one occurrence; line numbers,
values and the depth of a dump vary between occurrences as they do in production. The formats:
- JVM: `Throwable.printStackTrace` (`\\tat pkg.Class.method(File.java:N)`, `Caused by: `,
  `... N more`);
- .NET: `Exception.ToString()` (` ---> Inner: message`, `   at Ns.Type.Method(args) in path:line N`,
  `   --- End of inner exception stack trace ---`);
- Go: the runtime's panic print (`panic: ...`, `goroutine N [running]:`, function line, then
  `\\tpath:line +0xoff`);
- Node.js: V8's `Error.stack` (`    at fn (path:line:col)`).
"""

from __future__ import annotations

import random

Printed = tuple[str, str, str]

_JVM_ENTRY = (
    "\tat org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:{a})\n"
    "\tat jakarta.servlet.http.HttpServlet.service(HttpServlet.java:658)\n"
    "\tat org.apache.catalina.core.ApplicationFilterChain.doFilter(ApplicationFilterChain.java:{b})\n"
    "\tat org.apache.tomcat.util.threads.TaskThread$WrappingRunnable.run(TaskThread.java:61)\n"
    "\tat java.base/java.lang.Thread.run(Thread.java:1583)\n"
)


def _entry(rng: random.Random) -> str:
    return _JVM_ENTRY.format(a=rng.randint(880, 900), b=rng.randint(160, 180))


def java_wrapped(rng: random.Random, root: str) -> Printed:
    """One wrapper (`OrderRepository.save`) over two different root causes."""
    order = rng.randint(1000, 99999)
    message = f"save failed for order {order}"
    head = (
        f"com.acme.shop.RepositoryException: {message}\n"
        f"\tat com.acme.shop.OrderRepository.save(OrderRepository.java:88)\n"
        f"\tat com.acme.shop.OrderService.place(OrderService.java:41)\n"
        f"\tat com.acme.shop.web.OrderController.create(OrderController.java:27)\n" + _entry(rng)
    )
    if root == "timeout":
        cause = (
            "Caused by: java.sql.SQLTimeoutException: Connection is not available, request timed out "
            f"after {rng.choice((30000, 30001, 30004))}ms.\n"
            "\tat com.zaxxer.hikari.pool.HikariPool.createTimeoutException(HikariPool.java:696)\n"
            "\tat com.zaxxer.hikari.pool.HikariPool.getConnection(HikariPool.java:181)\n"
            "\tat com.acme.shop.db.Pool.acquire(Pool.java:33)\n"
            "\tat com.acme.shop.OrderRepository.save(OrderRepository.java:80)\n"
            "\t... 8 more\n"
        )
    else:
        cents = rng.choice(("12,50", "3,99", "1.299,00"))
        cause = (
            f'Caused by: java.lang.NumberFormatException: For input string: "{cents}"\n'
            "\tat java.base/java.lang.NumberFormatException.forInputString(NumberFormatException.java:67)\n"
            "\tat java.base/java.lang.Long.parseLong(Long.java:709)\n"
            "\tat com.acme.shop.db.RowMapper.price(RowMapper.java:19)\n"
            "\tat com.acme.shop.OrderRepository.save(OrderRepository.java:84)\n"
            "\t... 8 more\n"
        )
    return "com.acme.shop.RepositoryException", message, head + cause


def java_reserve(rng: random.Random, caller: str) -> Printed:
    """One crash site (`Inventory.reserve`) reached from different controllers."""
    sku = rng.choice(("A-100", "B-7", "C-33", "D-2"))
    message = f'Cannot invoke "com.acme.shop.model.Stock.take(int)" because the stock of {sku} is null'
    callers = {
        "checkout": "\tat com.acme.shop.web.CheckoutController.confirm(CheckoutController.java:{n})\n",
        "admin": "\tat com.acme.shop.admin.RestockTask.execute(RestockTask.java:{n})\n"
        "\tat com.acme.shop.admin.Scheduler.tick(Scheduler.java:54)\n",
        "api": "\tat com.acme.shop.api.v2.ReservationResource.post(ReservationResource.java:{n})\n"
        "\tat com.acme.shop.api.v2.Filters.authorised(Filters.java:12)\n",
    }
    text = (
        f"java.lang.NullPointerException: {message}\n"
        "\tat com.acme.shop.Inventory.reserve(Inventory.java:61)\n"
        "\tat com.acme.shop.OrderService.reserveAll(OrderService.java:73)\n"
        + callers[caller].format(n=rng.randint(20, 90))
        + _entry(rng)
    )
    return "java.lang.NullPointerException", message, text


def java_cut_at_template(rng: random.Random, view: str) -> Printed:
    """A trace cut at the template engine's frames: no thread entry, no framework below."""
    if view == "cart":
        message = 'Cannot invoke "com.acme.shop.model.Cart.getTotal()" because "cart" is null'
        top = "\tat com.acme.shop.web.CartView.total(CartView.java:31)\n"
    else:
        message = 'Cannot invoke "String.length()" because "name" is null'
        top = (
            "\tat com.acme.shop.web.UserView.initials(UserView.java:18)\n"
            "\tat com.acme.shop.web.UserView.badge(UserView.java:44)\n"
        )
    depth = rng.randint(2, 5)
    velocity = "".join(
        f"\tat org.apache.velocity.runtime.parser.node.ASTBlock.render(ASTBlock.java:{140 + i})\n"
        for i in range(depth)
    )
    text = (
        f"java.lang.NullPointerException: {message}\n"
        + top
        + "\tat jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)\n"
        "\tat java.base/java.lang.reflect.Method.invoke(Method.java:580)\n"
        "\tat org.apache.velocity.util.introspection.UberspectImpl$VelMethodImpl.doInvoke(UberspectImpl.java:570)\n"
        "\tat org.apache.velocity.runtime.parser.node.ASTMethod.execute(ASTMethod.java:225)\n"
        "\tat org.apache.velocity.runtime.parser.node.ASTReference.execute(ASTReference.java:280)\n"
        + velocity
    )
    return "java.lang.NullPointerException", message, text


_CHECKS = {
    "export": ("com.acme.shop.report.ExportCheck", "verify", "ExportCheck.java", 41),
    "invoice": ("com.acme.shop.billing.InvoiceCheck", "verify", "InvoiceCheck.java", 58),
    "stock": ("com.acme.shop.stock.StockCheck", "compare", "StockCheck.java", 23),
    "tax": ("com.acme.shop.billing.TaxCheck", "compare", "TaxCheck.java", 77),
}


def java_long_assertion(rng: random.Random, check: str) -> Printed:
    """An assertion whose message dumps both values: the first frame comes after line 60."""
    cls, method, file, line = _CHECKS[check]
    rows = rng.randint(35, 70)
    expected = "\n".join(
        f'  {{"id":{i},"sku":"S-{rng.randint(1, 999)}","qty":{rng.randint(1, 9)}}},' for i in range(rows)
    )
    actual = "\n".join(
        f'  {{"id":{i},"sku":"S-{rng.randint(1, 999)}","qty":{rng.randint(1, 9)}}},' for i in range(rows)
    )
    message = f"expected: <[\n{expected}\n]> but was: <[\n{actual}\n]>"
    text = (
        f"org.opentest4j.AssertionFailedError: {message}\n"
        "\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)\n"
        "\tat org.junit.jupiter.api.AssertionFailureBuilder.buildAndThrow(AssertionFailureBuilder.java:132)\n"
        "\tat org.junit.jupiter.api.AssertEquals.failNotEqual(AssertEquals.java:197)\n"
        "\tat org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:1156)\n"
        f"\tat {cls}.{method}({file}:{line})\n"
        "\tat com.acme.shop.report.NightlyJob.run(NightlyJob.java:22)\n"
        "\tat java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1144)\n"
        "\tat java.base/java.lang.Thread.run(Thread.java:1583)\n"
    )
    return "org.opentest4j.AssertionFailedError", message, text


def dotnet_wrapped(rng: random.Random, root: str) -> Printed:
    """`Exception.ToString()` of a wrapper with an inner exception, two different inner causes."""
    order = rng.randint(100, 9999)
    message = f"Order {order} could not be saved."
    if root == "timeout":
        inner = (
            " ---> System.TimeoutException: The operation has timed out.\n"
            "   at Acme.Shop.Data.Pool.Acquire(TimeSpan wait) in /src/Acme.Shop/Data/Pool.cs:line 42\n"
            "   at Acme.Shop.Orders.Repository.Save(Order order) in /src/Acme.Shop/Orders/Repository.cs:line 30\n"
        )
    else:
        inner = (
            " ---> System.FormatException: The input string '12,50' was not in a correct format.\n"
            "   at System.Number.ThrowFormatException[TChar](ReadOnlySpan`1 value)\n"
            "   at System.Decimal.Parse(String s, IFormatProvider provider)\n"
            "   at Acme.Shop.Data.RowReader.Price(IDataRecord row) in /src/Acme.Shop/Data/RowReader.cs:line 17\n"
            "   at Acme.Shop.Orders.Repository.Save(Order order) in /src/Acme.Shop/Orders/Repository.cs:line 32\n"
        )
    text = (
        f"System.InvalidOperationException: {message}\n"
        + inner
        + "   --- End of inner exception stack trace ---\n"
        "   at Acme.Shop.Orders.Repository.Save(Order order) in /src/Acme.Shop/Orders/Repository.cs:line 35\n"
        f"   at Acme.Shop.Api.OrdersController.Create(OrderDto dto) in /src/Acme.Shop/Api/OrdersController.cs:line {rng.randint(15, 19)}\n"
        "   at Microsoft.AspNetCore.Mvc.Infrastructure.ActionMethodExecutor.SyncActionResultExecutor.Execute(ActionContext context)\n"
        "   at Microsoft.AspNetCore.Mvc.Infrastructure.ControllerActionInvoker.InvokeActionMethodAsync()\n"
    )
    return "System.InvalidOperationException", message, text


def go_index_panic(rng: random.Random, caller: str) -> Printed:
    """One crash site (`cart.(*Cart).Line`) reached from different handlers and a worker."""
    index = rng.randint(3, 9)
    message = f"runtime error: index out of range [{index}] with length {index - rng.randint(1, 3)}"
    g = rng.randint(20, 900)
    callers = {
        "checkout": (
            "github.com/acme/shop/internal/api.(*Server).handleCheckout(0xc000123450, {0x8b5a20, 0xc0001c2000}, 0xc000200000)\n"
            f"\t/src/internal/api/checkout.go:{rng.randint(30, 40)} +0x1a5\n"
            "net/http.HandlerFunc.ServeHTTP(0xc0000a6000?, {0x8b5a20?, 0xc0001c2000?}, 0xc000200000?)\n"
            "\t/usr/local/go/src/net/http/server.go:2220 +0x29\n"
        ),
        "quote": (
            "github.com/acme/shop/internal/api.(*Server).handleQuote(0xc000123450, {0x8b5a20, 0xc0001c2000}, 0xc000200000)\n"
            f"\t/src/internal/api/quote.go:{rng.randint(50, 60)} +0x9c\n"
            "net/http.HandlerFunc.ServeHTTP(0xc0000a6000?, {0x8b5a20?, 0xc0001c2000?}, 0xc000200000?)\n"
            "\t/usr/local/go/src/net/http/server.go:2220 +0x29\n"
        ),
        "worker": (
            "github.com/acme/shop/internal/worker.(*Renewer).run(0xc0001d4000)\n"
            f"\t/src/internal/worker/renew.go:{rng.randint(70, 80)} +0x2f1\n"
            "created by github.com/acme/shop/internal/worker.Start in goroutine 1\n"
            "\t/src/internal/worker/start.go:19 +0x85\n"
        ),
    }
    text = (
        f"panic: {message}\n\n"
        f"goroutine {g} [running]:\n"
        "github.com/acme/shop/internal/cart.(*Cart).Line(...)\n"
        "\t/src/internal/cart/cart.go:57\n" + callers[caller]
    )
    return "runtime.boundsError", message, text


def node_orders(rng: random.Random, version: str) -> Printed:
    """Two modules named `orders.js`: `/app/src/api/v1/orders.js` and `.../v2/orders.js`."""
    message = "Cannot read properties of undefined (reading 'price')"
    line = 14 if version == "v1" else 22
    text = (
        f"TypeError: {message}\n"
        f"    at create (/app/src/api/{version}/orders.js:{line}:{rng.randint(20, 30)})\n"
        "    at Layer.handle [as handle_request] (/app/node_modules/express/lib/router/layer.js:95:5)\n"
        "    at next (/app/node_modules/express/lib/router/route.js:149:13)\n"
        "    at Route.dispatch (/app/node_modules/express/lib/router/route.js:119:3)\n"
    )
    return "TypeError", message, text


def node_long_assertion(rng: random.Random, check: str) -> Printed:
    """Node's `assert.deepStrictEqual` diff, long enough that the first frame is past line 60."""
    rows = rng.randint(32, 60)
    body = "\n".join(
        f"+   {{ id: {i}, qty: {rng.randint(1, 9)} }},\n-   {{ id: {i}, qty: {rng.randint(1, 9)} }},"
        for i in range(rows)
    )
    message = f"Expected values to be strictly deep-equal:\n+ actual - expected\n\n  [\n{body}\n  ]"
    file = {"stock": "stock.js", "ledger": "ledger.js"}[check]
    text = (
        f"AssertionError [ERR_ASSERTION]: {message}\n"
        f"    at verify (/app/src/checks/{file}:{rng.randint(10, 12)}:10)\n"
        "    at runChecks (/app/src/checks/index.js:31:7)\n"
        "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n"
    )
    return "AssertionError", message, text
