"""An action plugin as the seed writes one: list_actions and perform_action."""

SENT = []


class Plugin:
    def get_schema(self):
        return {"type": "object", "properties": {}}

    async def execute(self, params, context, host):
        return {"status": "success", "data": {"sent": len(SENT)}}

    async def list_actions(self):
        return [
            {
                "name": "mark_read",
                "description": "Mark a message read",
                "params_schema": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}},
                    "required": ["id"],
                },
                "required_scopes": ["gmail.modify"],
                "requires_approval": False,
            },
            {
                "name": "send_reply",
                "description": "Send a reply",
                "params_schema": {
                    "type": "object",
                    "properties": {"to": {"type": "string"}, "text": {"type": "string"}},
                },
                "requires_approval": True,
            },
        ]

    async def perform_action(self, name, args, context, host):
        if name == "mark_read":
            if args["id"] == "broken":
                return {
                    "status": "error",
                    "action_id": "a1",
                    "error": {"code": "invalid_parameters", "message": "no such message"},
                }
            return {
                "status": "ok",
                "action_id": "a-" + args["id"],
                "result": {"read": args["id"], "key": context.get("idempotency_key")},
            }
        SENT.append(args)
        return {"status": "ok", "action_id": "s1", "result": {"sent_to": args.get("to")}}
