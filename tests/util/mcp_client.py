"""Drives `gpudoctor mcp` with the official MCP client (the `mcp` package) over stdio, as an
assistant does, for tests/it/mcp.rs. argv[1] is a JSON request:
{"command": PATH, "args": [...], "env": {...}, "mode": "auto"|"legacy", "calls": [[TOOL, ARGS], ...]}
It prints one JSON object: the negotiated protocol version, the tool names, the resources, the
codes resource's length, and each call's text, structured content and isError."""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


async def main(req):
    params = StdioServerParameters(command=req["command"], args=req["args"], env=req["env"])
    out = {"results": []}
    async with Client(params, mode=req.get("mode", "auto")) as client:
        out["protocol"] = getattr(client.session, "_negotiated_version", None)
        tools = await client.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        resources = await client.list_resources()
        out["resources"] = [str(r.uri) for r in resources.resources]
        codes = await client.read_resource("gpudoctor://codes")
        out["codes"] = json.loads(codes.contents[0].text)
        for name, args in req["calls"]:
            r = await client.call_tool(name, args)
            out["results"].append(
                {
                    "tool": name,
                    "is_error": bool(r.is_error),
                    "texts": [c.text for c in r.content if getattr(c, "type", "") == "text"],
                    "structured": r.structured_content,
                }
            )
    print(json.dumps(out))


asyncio.run(main(json.loads(sys.argv[1])))
