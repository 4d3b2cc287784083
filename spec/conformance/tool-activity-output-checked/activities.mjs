export default { measure: async () => ({ inches: 3 }) };
